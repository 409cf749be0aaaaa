// Badge and PIN sign-in on an enrolled store device (contract section 17). The browser is the device
// by its long-lived cookie; a badge or a PIN is refused anywhere else. A person signs in there only
// with a role at the device's location, and the shift session lasts at most 12 hours.
import type { FastifyRequest } from 'fastify';
import { personAuditActor, unknownPerson, writeAudit, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { AppError } from '../http/errors.ts';
import { sha256hex } from '../http/secrets.ts';
import { cookieOf, DEVICE_COOKIE } from './cookies.ts';
import { verifySecret, type Hasher } from './passwords.ts';
import { startSession } from './sessions.ts';
import { attempt, PIN_THROTTLE } from './throttle.ts';

export interface EnrolledDevice {
  id: number;
  organizationId: number;
  locationId: number;
}

export type DeviceSignIn = { email: string; pin: string } | { badgeCode: string };

export interface StoreDeviceSignIn {
  /** The enrolled (not revoked) store device this browser is, if any. */
  deviceOf(request: FastifyRequest): Promise<EnrolledDevice | null>;
  /** A shift session on the request's device; returns the session's cookie value. */
  signIn(request: FastifyRequest, how: DeviceSignIn, origin: AuditOrigin): Promise<string>;
}

/** A badge is found by this digest within its organization: the code itself is never stored. */
export const badgeDigest = (organizationId: number, code: string): string => sha256hex(`storeops badge ${organizationId}:${code.trim()}`);

const wrong = () => new AppError(401, 'unauthorized', 'that badge or PIN is not right for this store');

interface Candidate {
  id: number;
  name: string;
  pin_hash: string | null;
}

export function storeDeviceSignIn(deps: { db: Db; clock: Clock; hasher: Hasher }): StoreDeviceSignIn {
  async function deviceOf(request: FastifyRequest): Promise<EnrolledDevice | null> {
    const value = cookieOf(request, DEVICE_COOKIE);
    if (value === null) return null;
    const [row] = await deps.db.run<{ id: number; organization_id: number; location_id: number }>(
      sql`SELECT id, organization_id, location_id FROM store_devices WHERE device_hash = ${sha256hex(value)} AND revoked_at IS NULL`,
    );
    return row === undefined ? null : { id: row.id, organizationId: row.organization_id, locationId: row.location_id };
  }

  /** The active person of the device's organization with a role at its location, by email or badge. */
  async function candidate(device: EnrolledDevice, how: DeviceSignIn): Promise<Candidate | undefined> {
    const who =
      'badgeCode' in how ? sql`p.badge_digest = ${badgeDigest(device.organizationId, how.badgeCode)}` : sql`lower(p.email) = lower(${how.email.trim()})`;
    const [row] = await deps.db.run<Candidate>(sql`
      SELECT p.id, p.name, p.pin_hash FROM people p
      WHERE p.organization_id = ${device.organizationId} AND p.status = 'active' AND ${who}
        AND EXISTS (SELECT 1 FROM memberships m WHERE m.person_id = p.id AND (m.location_id IS NULL OR m.location_id = ${device.locationId}))`);
    return row;
  }

  async function signIn(request: FastifyRequest, how: DeviceSignIn, origin: AuditOrigin): Promise<string> {
    const now = deps.clock.now();
    const device = await deviceOf(request);
    if (device === null) throw new AppError(403, 'forbidden', 'badge and PIN sign-in work only on an enrolled store device');
    const method = 'badgeCode' in how ? 'badge' : 'pin';
    const person = await candidate(device, how);
    let right = person !== undefined && method === 'badge';
    if ('pin' in how) {
      // Unknown people are throttled by the email typed, so that trying emails costs what trying PINs does.
      const subject = `${person?.id ?? how.email.trim().toLowerCase()}@${device.id}`;
      right = await attempt(
        deps.db,
        PIN_THROTTLE,
        subject,
        now,
        async () => person !== undefined && (await verifySecret(how.pin, person.pin_hash, deps.hasher)),
      );
    }
    const actor = person === undefined ? unknownPerson : personAuditActor(person);
    const entry = { actor, target: { type: 'store_device', id: device.id }, organizationId: device.organizationId, locationId: device.locationId, origin };
    if (!right || person === undefined) {
      await deps.db.statement((q) => writeAudit(q, { ...entry, action: 'sign_in.failed', changes: { method: { from: null, to: method } } }, now));
      throw wrong();
    }
    return deps.db.tx(async (q) => {
      const session = await startSession(q, { personId: person.id, method, storeDeviceId: device.id }, now);
      await q.run(sql`UPDATE store_devices SET last_seen_at = ${now} WHERE id = ${device.id}`);
      await writeAudit(q, { ...entry, action: 'sign_in.succeeded', changes: { method: { from: null, to: method } } }, now);
      return session;
    });
  }

  return { deviceOf, signIn };
}
