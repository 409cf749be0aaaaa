// Store devices for the tests (contract section 17 "Shared devices"): enrolled over HTTP by an
// admin's session as the browser that becomes the device does, then badge and PIN sign-in with the
// device's cookie, as that browser's cookie jar sends it.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { fromPage, type Signed } from './people.ts';
import { freshId, type TestContext } from './world.ts';

export interface Enrolled {
  /** `storeops_device=<value>`: what the device's browser sends from now on. */
  cookie: string;
  setCookie: string;
  device: { id: number; location_id: number; name: string; revoked_at: string | null };
}

/** The Set-Cookie of `name` in an answer, if it sets one. */
export function setCookieOf(res: LightMyRequestResponse, name: string): string | undefined {
  const all = [res.headers['set-cookie'] ?? []].flat().map(String);
  return all.find((c) => c.startsWith(`${name}=`));
}

export function enrollRequest(app: App, admin: Signed, body: Record<string, unknown>, extra: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/admin/store_devices', headers: { ...fromPage(admin), ...extra }, payload: body });
}

/** Enrolls the admin's browser as a store device of the location. */
export async function enroll(app: App, admin: Signed, locationId: number, name = 'Front desk tablet'): Promise<Enrolled> {
  const res = await enrollRequest(app, admin, { location_id: locationId, name });
  assert.equal(res.statusCode, 201, res.body);
  const setCookie = setCookieOf(res, 'storeops_device');
  assert.ok(setCookie !== undefined, 'the answer sets the device cookie');
  return { cookie: setCookie.split(';')[0] as string, setCookie, device: res.json() };
}

/** A badge or PIN sign-in, with the device's cookie (or none). */
export function deviceSignIn(app: App, deviceCookie: string | null, payload: { badge_code: string } | { email: string; pin: string }) {
  return app.inject({
    method: 'POST',
    url: '/api/session',
    headers: deviceCookie === null ? {} : { cookie: deviceCookie },
    payload,
  });
}

/** The session of a device sign-in that succeeded, with the device's cookie in its jar. */
export async function shift(app: App, deviceCookie: string, payload: { badge_code: string } | { email: string; pin: string }): Promise<Signed> {
  const res = await deviceSignIn(app, deviceCookie, payload);
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = setCookieOf(res, 'storeops_session') as string;
  return { cookie: `${setCookie.split(';')[0] as string}; ${deviceCookie}`, setCookie, csrf: res.json<{ csrf_token: string }>().csrf_token };
}

/** Another location of the organization. */
export async function addLocation(ctx: Pick<TestContext, 'db' | 'clock'>, organizationId: number): Promise<number> {
  const id = freshId();
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id, organization_id: organizationId, name: `Store ${id}` }] });
  return id;
}
