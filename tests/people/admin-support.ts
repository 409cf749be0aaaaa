// The administration tests' world (section 18): one organization with locations A and B, an org_admin,
// a location_admin and a staff member of A, admin tokens (unlimited and limited to A), a token
// without the admin scope, and another organization with its own org_admin; callers by session or
// token, and the audit entries a test reads back.
import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { consoleWorld, type ConsoleWorld } from '../console/support.ts';
import { fromPage, makePerson, signInHttp, type Signed, type TestPerson } from '../support/people.ts';
import { freshId, makeWorld, provisionToken, type World } from '../support/world.ts';

export interface AdminWorld extends ConsoleWorld {
  locationB: number;
  locationAdmin: TestPerson;
  staff: TestPerson;
  adminToken: string;
  limitedToken: string;
  cfhToken: string;
  other: World & { admin: TestPerson };
}

export async function adminWorld(db: Db, clock: Clock): Promise<AdminWorld> {
  const w = await consoleWorld(db, clock);
  const locationB = freshId();
  await applyProvisioning(db, clock, { locations: [{ id: locationB, organization_id: w.organizationId, name: `Store ${locationB}` }] });
  const other = await makeWorld(db, clock);
  return {
    ...w,
    locationB,
    locationAdmin: await makePerson(db, clock, w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [w.locationId] }),
    staff: await makePerson(db, clock, w.organizationId, { name: 'Stu', role: 'staff', locationIds: [w.locationId] }),
    adminToken: await provisionToken(db, clock, w.organizationId, ['admin']),
    limitedToken: await provisionToken(db, clock, w.organizationId, ['admin'], { locationIds: [w.locationId] }),
    cfhToken: await provisionToken(db, clock, w.organizationId, ['cfh', 'reports']),
    other: { ...other, admin: await makePerson(db, clock, other.organizationId, { name: 'Oz' }) },
  };
}

/** How a test calls: a session's cookie and CSRF token from the service's page, or a bearer token. */
export type Caller = { session: Signed } | { token: string } | 'nobody';

export const bearer = (token: string): Caller => ({ token });

export async function sessionOf(app: App, person: Pick<TestPerson, 'email' | 'password'>): Promise<Caller> {
  return { session: await signInHttp(app, person) };
}

export function headersOf(caller: Caller): Record<string, string> {
  if (caller === 'nobody') return {};
  if ('token' in caller) return { authorization: `Bearer ${caller.token}` };
  return fromPage(caller.session);
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export function call(app: App, caller: Caller, method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  const options: InjectOptions = { method, url, headers: { ...headersOf(caller), ...headers } };
  if (payload !== undefined) options.payload = payload as InjectOptions['payload'];
  return app.inject(options);
}

/** Makes a file-made person administration's own (as if an administrator had made them). */
/** The refusals every administration operation gives outsiders: staff 403 `forbidden`, a token
 * without the admin scope 403 `insufficient_scope`, nobody 401. */
export async function refusedToOutsiders(app: App, w: AdminWorld, ops: (caller: Caller) => Promise<LightMyRequestResponse>[]): Promise<void> {
  const expect = async (caller: Caller, status: number, code: string) => {
    for (const res of await Promise.all(ops(caller))) assert.deepEqual([res.statusCode, res.json().code], [status, code], res.body);
  };
  await expect(await sessionOf(app, w.staff), 403, 'forbidden');
  await expect(bearer(w.cfhToken), 403, 'insufficient_scope');
  await expect('nobody', 401, 'unauthorized');
}

export async function adminManaged(db: Db, personId: number): Promise<void> {
  await db.query("UPDATE people SET managed_by = 'admin' WHERE id = $1", [personId]);
  await db.query("UPDATE memberships SET granted_by = 'admin' WHERE person_id = $1", [personId]);
}

export interface AuditRow {
  action: string;
  actor_type: string;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  location_id: number | null;
  organization_id: number | null;
  changes: Record<string, { from: unknown; to: unknown }>;
}

/** The organization's audit entries of these actions, oldest first. */
export async function auditOf(db: Db, organizationId: number, actions: string[]): Promise<AuditRow[]> {
  return db.query<AuditRow>(
    `SELECT action, actor_type, actor_id, target_type, target_id, location_id, organization_id, changes FROM audit_entries
     WHERE organization_id = $1 AND action = ANY ($2::text[]) ORDER BY id`,
    [organizationId, actions],
  );
}

/** Every audit entry of the organization as text (to look for a secret in it). */
export async function auditText(db: Db, organizationId: number): Promise<string> {
  return JSON.stringify(await db.query('SELECT * FROM audit_entries WHERE organization_id = $1', [organizationId]));
}
