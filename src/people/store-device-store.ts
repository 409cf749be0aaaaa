// Store devices' SQL (section 17 "Shared devices"; this file and store-device-sign-in.ts's last-seen
// time are the writers of `store_devices`). A device is found within the actor's reach, so another
// organization's, or one of a location out of reach, is as unknown as none.
import type { Actor } from '../access/actor.ts';
import { reachSql } from '../access/reach-sql.ts';
import type { Queryable } from '../db/db.ts';
import { sql } from '../db/sql.ts';

export interface StoreDeviceRow {
  id: number;
  organization_id: number;
  location_id: number;
  name: string;
  enrolled_by: number | null;
  enrolled_by_name: string | null;
  created_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = sql`d.id, d.organization_id, d.location_id, d.name, d.enrolled_by, p.name AS enrolled_by_name, d.created_at, d.last_seen_at, d.revoked_at`;

export async function insertStoreDevice(
  q: Queryable,
  device: { organizationId: number; locationId: number; name: string; deviceHash: string; enrolledBy: number },
  now: Date,
): Promise<StoreDeviceRow> {
  const [row] = await q.run<StoreDeviceRow>(sql`
    WITH d AS (
      INSERT INTO store_devices (organization_id, location_id, name, device_hash, enrolled_by, created_at)
      VALUES (${device.organizationId}, ${device.locationId}, ${device.name}, ${device.deviceHash}, ${device.enrolledBy}, ${now})
      RETURNING *)
    SELECT ${COLUMNS} FROM d LEFT JOIN people p ON p.id = d.enrolled_by`);
  if (row === undefined) throw new Error('the store device was not inserted');
  return row;
}

/** The devices within the actor's reach (of one location, when given), by location, name and id. */
export function listStoreDevices(q: Queryable, actor: Actor, locationId: number | null): Promise<StoreDeviceRow[]> {
  return q.run<StoreDeviceRow>(sql`
    SELECT ${COLUMNS} FROM store_devices d LEFT JOIN people p ON p.id = d.enrolled_by
    WHERE ${reachSql(actor, sql.raw('d'))} AND (${locationId}::int IS NULL OR d.location_id = ${locationId})
    ORDER BY d.location_id, d.name, d.id`);
}

/** The device within the actor's reach, locked for the change that follows. */
export async function lockStoreDevice(q: Queryable, actor: Actor, id: number): Promise<StoreDeviceRow | undefined> {
  const [row] = await q.run<StoreDeviceRow>(sql`
    SELECT ${COLUMNS} FROM store_devices d LEFT JOIN people p ON p.id = d.enrolled_by
    WHERE d.id = ${id} AND ${reachSql(actor, sql.raw('d'))}
    FOR UPDATE OF d`);
  return row;
}

export async function markRevoked(q: Queryable, id: number, now: Date): Promise<string> {
  const [row] = await q.run<{ revoked_at: string }>(sql`UPDATE store_devices SET revoked_at = ${now} WHERE id = ${id} RETURNING revoked_at`);
  if (row === undefined) throw new Error('the store device went away under its lock');
  return row.revoked_at;
}
