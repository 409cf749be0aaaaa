// The setup administration tests' helpers (section 18): the administration world of the people
// tests, a hub token to press buttons with, and the checks every setup object shares.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { provisionToken } from '../support/world.ts';
import { adminWorld, auditText, bearer, call, type AdminWorld, type Caller } from '../people/admin-support.ts';

export { adminWorld, auditOf, auditText, bearer, call, refusedToOutsiders, sessionOf, type AdminWorld, type Caller } from '../people/admin-support.ts';

export interface SetupWorld extends AdminWorld {
  hubToken: string;
}

export async function setupWorld(db: Db, clock: Clock): Promise<SetupWorld> {
  const w = await adminWorld(db, clock);
  return { ...w, hubToken: await provisionToken(db, clock, w.organizationId, ['buttons']) };
}

export const mac = () =>
  Array.from(crypto.randomBytes(6))
    .map((b) => b.toString(16).padStart(2, '0').toUpperCase())
    .join(':');

/** A press of B1 through the hub. */
export const press = (app: App, hubToken: string, deviceKey: string) =>
  app.inject({ method: 'POST', url: '/api/callbutton/press', headers: { authorization: `Hub ${hubToken}` }, payload: { device_key: deviceKey, button: 1 } });

/** 422 with `field` among its errors. */
export function assertField(res: { statusCode: number; body: string; json: () => { code: string; errors?: Record<string, string[]> } }, field: string): void {
  assert.equal(res.statusCode, 422, res.body);
  assert.equal(res.json().code, 'validation_failed', res.body);
  assert.ok(Object.keys(res.json().errors ?? {}).includes(field), `${field} in ${res.body}`);
}

export function assertCode(res: { statusCode: number; body: string; json: () => { code: string } }, status: number, code: string): void {
  assert.deepEqual([res.statusCode, res.json().code], [status, code], res.body);
}

/** No secret in the organization's audit entries, nor in what a caller lists and reads. */
export async function assertNowhere(app: App, db: Db, w: AdminWorld, caller: Caller, secret: string, urls: string[]): Promise<void> {
  assert.ok(!(await auditText(db, w.organizationId)).includes(secret), 'a secret in the audit log');
  for (const url of urls) {
    const res = await call(app, caller, 'GET', url);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(!res.body.includes(secret), `a secret in ${url}`);
  }
}

export { bearer as tokenCaller };
export const ifMatch = (version: number) => ({ 'if-match': `"${version}"` });
