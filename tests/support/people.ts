// People for the tests: provisioned as an operator's file would (section 7), with a password set as
// the person would set it, so that a test signs in over HTTP exactly as the console's page does.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { sql } from '../../src/db/sql.ts';
import { hashSecret } from '../../src/people/passwords.ts';
import { badgeDigest } from '../../src/people/store-device-sign-in.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';

export type TestRole = 'org_admin' | 'location_admin' | 'staff';

export interface TestPerson {
  id: number;
  email: string;
  password: string;
  name: string;
}

export interface PersonOptions {
  name?: string;
  role?: TestRole;
  /** The locations of a location_admin or staff role (required for them). */
  locationIds?: number[];
  /** More roles at other locations. */
  more?: { role: TestRole; locationIds?: number[] }[];
  pin?: string;
  badge?: string;
}

/** A new active person of the organization with a password (an org_admin unless told). */
export async function makePerson(db: Db, clock: Clock, organizationId: number, opts: PersonOptions = {}): Promise<TestPerson> {
  const name = opts.name ?? 'Sam';
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}.${crypto.randomBytes(5).toString('hex')}@example.com`;
  const role = opts.role ?? 'org_admin';
  const grant = (r: TestRole, ids?: number[]) => (r === 'org_admin' ? { role: r } : { role: r, location_ids: ids ?? [] });
  await applyProvisioning(db, clock, {
    people: [
      {
        email,
        name,
        organization_id: organizationId,
        memberships: [grant(role, opts.locationIds), ...(opts.more ?? []).map((m) => grant(m.role, m.locationIds))],
      },
    ],
  });
  const [row] = await db.run<{ id: number }>(sql`SELECT id FROM people WHERE lower(email) = lower(${email})`);
  assert.ok(row !== undefined);
  const password = `pw-${crypto.randomBytes(9).toString('base64url')}`;
  await db.query('UPDATE people SET password_hash = $2, pin_hash = $3, badge_digest = $4 WHERE id = $1', [
    row.id,
    await hashSecret(password),
    opts.pin === undefined ? null : await hashSecret(opts.pin),
    opts.badge === undefined ? null : badgeDigest(organizationId, opts.badge),
  ]);
  return { id: row.id, email, password, name };
}

export interface Signed {
  cookie: string;
  setCookie: string;
  csrf: string;
}

/** Signs in over HTTP as the console's page does; the session's cookie and CSRF token. */
export async function signInHttp(app: App, person: Pick<TestPerson, 'email' | 'password'>): Promise<Signed> {
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { email: person.email, password: person.password } });
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  return { cookie, setCookie, csrf: res.json<{ csrf_token: string }>().csrf_token };
}

/** Headers of a state-changing call from the service's own page. */
export const fromPage = (s: Signed) => ({ cookie: s.cookie, 'x-csrf-token': s.csrf, origin: 'http://storeops.test' });
