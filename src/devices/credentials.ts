// Device credentials, in one place: a locker's api_key and an edge device's key. A device logs in
// to MQTT with its name and key (the embedded broker, or an external broker asking over HTTP); a
// locker also sends its key in L7's api-key header, an edge device in R1's. Keys are stored as
// SHA-256 digests and compared in constant time, and a key that matches no device is compared too,
// against a stand-in digest, so a miss costs what a wrong key costs. A retired locker (enabled
// false, or of a retired location) has no key that works (section 18).
import type { Queryable } from '../db/db.ts';
import type { LockerIdentity } from '../http/auth.ts';
import { matchesDigest, sha256hex } from '../http/secrets.ts';
import type { DeviceIdentity } from './wire.ts';

/** An edge device as its key identifies it. */
export interface EdgeIdentity {
  edgeId: string;
  organizationId: number;
  locationId: number;
  /** The radio's voice handlers, read with the key so that a play needs one read to begin. */
  voiceHandlers: readonly string[];
}

const NO_DEVICE_DIGEST = sha256hex('no such device');

/** The key against the stored digest of the row found, or of no row: the same work either way. */
function keyMatches(key: string, row: { key_hash: string } | undefined): boolean {
  const ok = matchesDigest(key, row?.key_hash ?? NO_DEVICE_DIGEST);
  return ok && row !== undefined;
}

/** MQTT login: is `key` the key of the device the username names? */
export async function checkDeviceKey(q: Queryable, device: DeviceIdentity, key: string): Promise<boolean> {
  const [row] =
    device.kind === 'locker'
      ? await q.query<{ key_hash: string }>(
          'SELECT k.api_key_hash AS key_hash FROM lockers k JOIN locations l ON l.id = k.location_id WHERE k.id = $1 AND k.enabled AND l.enabled',
          [device.lockerId],
        )
      : await q.query<{ key_hash: string }>('SELECT device_key_hash AS key_hash FROM radio_edges WHERE edge_id = $1', [device.edgeId]);
  return keyMatches(key, row);
}

/** L7's api-key header: the locker whose key this is, if any. */
export async function lockerByKey(q: Queryable, apiKey: string): Promise<LockerIdentity | null> {
  const [row] = await q.query<{ id: number; organization_id: number; location_id: number; version: number; key_hash: string }>(
    `SELECT k.id, k.organization_id, k.location_id, k.version, k.api_key_hash AS key_hash FROM lockers k JOIN locations l ON l.id = k.location_id
     WHERE k.api_key_hash = $1 AND k.enabled AND l.enabled`,
    [sha256hex(apiKey)],
  );
  if (!keyMatches(apiKey, row) || row === undefined) return null;
  return { id: row.id, organizationId: row.organization_id, locationId: row.location_id, version: row.version };
}

/** R1's (and the transcripts') api-key header: the edge device whose key this is, if any. */
export async function edgeByKey(q: Queryable, deviceKey: string): Promise<EdgeIdentity | null> {
  const [row] = await q.query<{ edge_id: string; organization_id: number; location_id: number; voice_handlers: string[]; key_hash: string }>(
    'SELECT edge_id, organization_id, location_id, voice_handlers, device_key_hash AS key_hash FROM radio_edges WHERE device_key_hash = $1',
    [sha256hex(deviceKey)],
  );
  if (!keyMatches(deviceKey, row) || row === undefined) return null;
  return { edgeId: row.edge_id, organizationId: row.organization_id, locationId: row.location_id, voiceHandlers: row.voice_handlers };
}
