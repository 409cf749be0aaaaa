// Store devices (contract sections 17 and 18): a location's administrator enrolls a shared tablet or
// handheld from a browser on it, which keeps a long-lived cookie (256 random bits, stored as their
// SHA-256) and becomes a place where people of that location sign in with a badge or a PIN
// (store-device-sign-in.ts). Revoking it refuses the cookie and ends its shift sessions. Each change
// is an audit entry written in its transaction.
import { mayDo, type OrganizationActor, type PersonActor } from '../access/actor.ts';
import { locationVerdict } from '../access/locations.ts';
import { auditActorOf, writeAudit, type AuditOrigin } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { AppError, invalid, notFound } from '../http/errors.ts';
import { randomToken, sha256hex } from '../http/secrets.ts';
import { administeredBy } from '../admin/auth.ts';
import { endDeviceSessions } from './session-store.ts';
import { endSessionByValue } from './sessions.ts';
import * as store from './store-device-store.ts';
import type { EnrolledDevice } from './store-device-sign-in.ts';

export type { StoreDeviceRow } from './store-device-store.ts';

export interface StoreDeviceDeps {
  db: Db;
  clock: Clock;
}

/** The browser asking to be enrolled: its session's cookie value and the device it already is, if any. */
export interface EnrollingBrowser {
  session: string;
  device: EnrolledDevice | null;
}

export interface Enrolled {
  device: store.StoreDeviceRow;
  /** The device cookie's value: shown to that browser only, never stored. */
  cookie: string;
}

const forbidden = (message: string) => new AppError(403, 'forbidden', message);

/** The location, checked for administering it: out of reach 404, visible but not administered 403. */
async function administeredLocation(deps: StoreDeviceDeps, actor: OrganizationActor, locationId: number): Promise<void> {
  const verdict = await locationVerdict(deps.db, actor, locationId, 'administer');
  if (verdict === 'unknown') throw notFound('location');
  if (verdict === 'visible') throw forbidden("administering this location's store devices is for its admins");
}

/** listStoreDevices: the devices of the locations the actor administers (of one, when given), revoked ones too. */
export async function listStoreDevices(deps: StoreDeviceDeps, actor: OrganizationActor, locationId: number | null): Promise<store.StoreDeviceRow[]> {
  if (locationId !== null) await administeredLocation(deps, actor, locationId);
  return store.listStoreDevices(deps.db, administeredBy(actor), locationId);
}

/**
 * enrollStoreDevice: called by a person with their session in the browser that becomes the device.
 * A token has no browser to enroll (403). A browser that already is an enrolled device is refused
 * (409): revoke that one first. The enrolling session ends with it, so that an administrator's
 * session is never left open on a shared device; people then sign in there with badges and PINs.
 */
export async function enrollStoreDevice(
  deps: StoreDeviceDeps,
  actor: OrganizationActor,
  body: { location_id: number; name: string },
  browser: EnrollingBrowser,
  origin: AuditOrigin,
): Promise<Enrolled> {
  if (actor.kind !== 'person') throw forbidden("a store device is enrolled from a person's session in the browser that becomes the device, not with a token");
  await administeredLocation(deps, actor, body.location_id);
  const name = body.name.trim();
  if (name === '') throw invalid('name', 'must not be blank');
  if (browser.device !== null) {
    throw new AppError(409, 'already_enrolled', `this browser already is store device ${browser.device.id}; revoke it first to enroll it again`);
  }
  const now = deps.clock.now();
  const cookie = randomToken(32);
  const device = await deps.db.tx(async (q) => {
    const row = await store.insertStoreDevice(
      q,
      { organizationId: actor.reach.organizationId, locationId: body.location_id, name, deviceHash: sha256hex(cookie), enrolledBy: actor.personId },
      now,
    );
    await writeAudit(
      q,
      {
        actor: auditActorOf(actor),
        action: 'store_device.enrolled',
        target: { type: 'store_device', id: row.id, name: row.name },
        organizationId: row.organization_id,
        locationId: row.location_id,
        changes: { name: { from: null, to: row.name }, location_id: { from: null, to: row.location_id } },
        origin,
      },
      now,
    );
    await endEnrollingSession(q, actor, browser.session, row, origin, now);
    return row;
  });
  return { device, cookie };
}

async function endEnrollingSession(q: Tx, person: PersonActor, session: string, device: store.StoreDeviceRow, origin: AuditOrigin, now: Date): Promise<void> {
  const ended = await endSessionByValue(q, session, now);
  if (ended === undefined) return;
  await writeAudit(
    q,
    {
      actor: auditActorOf(person),
      action: 'sign_out',
      target: { type: 'session', id: ended.id, name: person.name },
      organizationId: device.organization_id,
      locationId: device.location_id,
      changes: { reason: { from: null, to: `enrolled store device ${device.id}` } },
      origin,
    },
    now,
  );
}

/**
 * revokeStoreDevice: its cookie is refused from now on and its live shift sessions end (a session is
 * read with its device at every request, so another instance refuses them at their next request as
 * well). Revoking a revoked device changes nothing and answers it as it is.
 */
export async function revokeStoreDevice(deps: StoreDeviceDeps, actor: OrganizationActor, id: number, origin: AuditOrigin): Promise<store.StoreDeviceRow> {
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const device = await store.lockStoreDevice(q, actor, id);
    if (device === undefined) throw notFound('store device');
    if (!mayDo(actor, 'administer', { organizationId: device.organization_id, locationId: device.location_id })) {
      throw forbidden("administering this location's store devices is for its admins");
    }
    if (device.revoked_at !== null) return device;
    const revokedAt = await store.markRevoked(q, device.id, now);
    const place = { organizationId: device.organization_id, locationId: device.location_id, origin };
    await writeAudit(
      q,
      {
        ...place,
        actor: auditActorOf(actor),
        action: 'store_device.revoked',
        target: { type: 'store_device', id: device.id, name: device.name },
        changes: { revoked_at: { from: null, to: revokedAt } },
      },
      now,
    );
    for (const session of await endDeviceSessions(q, device.id, now)) {
      await writeAudit(
        q,
        {
          ...place,
          actor: auditActorOf(actor),
          action: 'session.ended',
          target: { type: 'session', id: session.id, name: session.name },
          changes: { reason: { from: null, to: `store device ${device.id} revoked` } },
        },
        now,
      );
    }
    return { ...device, revoked_at: revokedAt };
  });
}
