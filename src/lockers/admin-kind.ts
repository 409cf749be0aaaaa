// A locker and its cabinets as section 18 administers them: the provisioning file's entry, its
// api_key made by the service when not given (shown once, when made or rotated), its cabinets
// replaced as a set by an update (a cabinet with orders is never deleted: 409 in_use).
import { sql } from '../db/sql.ts';
import type { Tx } from '../db/db.ts';
import { changesBetween, type AuditChanges } from '../audit/record.ts';
import type { ObjectKind } from '../admin/objects.ts';
import { deleteUnlessUsed, insertObject, type ObjectRow, type ObjectSource } from '../admin/object-store.ts';
import { cabinetColumns, checkCabinetKeys, lockerColumns, type Cabinet, type Locker } from '../provisioning/entries.ts';

/** A cabinet as administration gives it: its id the service's when not given. */
export type AdminCabinet = Omit<Cabinet, 'id'> & { id?: number | undefined };

/** The locker's entry without the file's protocol `version` (section 18's `version` is the object's). */
export type AdminLocker = Omit<Locker, 'version' | 'api_key'> & { api_key?: string | undefined; cabinets?: AdminCabinet[] | undefined };

export interface LockerRow extends ObjectRow, Omit<AdminLocker, 'id' | 'enabled' | 'location_id' | 'api_key'> {
  /** The file's `version`: the locker's protocol (2). */
  protocol_version: number;
  cabinets: Cabinet[];
}

const CABINETS_JSON = sql`(SELECT coalesce(json_agg(json_build_object('id', c.id, 'key', c.key, 'name', c.name, 'size', c.size,
    'thermal_mode', c.thermal_mode, 'tag', c.tag, 'enabled', c.enabled) ORDER BY c.key), '[]') FROM cabinets c WHERE c.locker_id = x.id)`;

export const LOCKERS: ObjectSource = {
  table: 'lockers',
  select: sql`SELECT x.id, x.organization_id, x.location_id, x.name, x.version AS protocol_version, x.rear_loading_available, x.timer,
      ${CABINETS_JSON} AS cabinets, x.enabled, x.object_version AS version, x.managed_by, x.created_at, x.updated_at FROM lockers x`,
  organization: sql`x.organization_id`,
  location: sql`x.location_id`,
  versionColumn: 'object_version',
  sequence: 'lockers_admin_id',
};

/** Where a new cabinet's id comes from. */
const CABINETS: ObjectSource = { ...LOCKERS, table: 'cabinets', sequence: 'cabinets_admin_id' };

const shownCabinets = (cabinets: readonly AdminCabinet[]) =>
  cabinets.map((c) => ({
    key: c.key,
    name: c.name ?? null,
    size: c.size ?? 'medium',
    thermal_mode: c.thermal_mode ?? 'ambient',
    tag: c.tag ?? null,
    enabled: c.enabled ?? true,
  }));

/** Writes the cabinets an entry names (updated by id, else by key, else made) and deletes the
 * others (409 in_use if orders refer to one). */
async function writeCabinets(tx: Tx, lockerId: number, entry: AdminLocker, before: LockerRow | null, now: Date): Promise<AuditChanges> {
  // An update that names no cabinets keeps them (the entry holds the very list it was read with).
  if (entry.cabinets === undefined || entry.cabinets === before?.cabinets) return {};
  const had = before?.cabinets ?? [];
  const matched = entry.cabinets.map((c) => had.find((h) => (c.id !== undefined ? h.id === c.id : h.key === c.key)));
  // Keys may pass from one cabinet to another: the kept ones let go of theirs first.
  const keptIds = matched.flatMap((h) => (h === undefined ? [] : [h.id]));
  await tx.run(sql`UPDATE cabinets SET key = -key - 1 WHERE id = ANY (${keptIds}::int[])`);
  const kept: number[] = [];
  for (const [j, c] of entry.cabinets.entries()) {
    const same = matched[j];
    const columns = cabinetColumns({ ...c, id: 0 }, lockerId, 'admin');
    if (same === undefined) {
      kept.push(await insertObject(tx, CABINETS, c.id, columns, now, false));
      continue;
    }
    const sets = Object.entries(columns).map(([name, col]) => sql`${sql.raw(name)} = ${col.value}`);
    await tx.run(sql`UPDATE cabinets SET ${sql.join(sets)}, updated_at = ${now} WHERE id = ${same.id}`);
    kept.push(same.id);
  }
  const gone = had.filter((h) => !kept.includes(h.id)).map((h) => h.id);
  if (gone.length > 0) await deleteUnlessUsed(tx, 'a cabinet left out', [sql`DELETE FROM cabinets WHERE id = ANY (${gone}::int[])`]);
  return changesBetween({ cabinets: shownCabinets(had) }, { cabinets: shownCabinets(entry.cabinets) });
}

export const lockerKind: ObjectKind<LockerRow, AdminLocker> = {
  type: 'locker',
  what: 'locker',
  source: LOCKERS,
  entryOf: (r) => ({
    id: r.id,
    location_id: r.location_id as number,
    name: r.name,
    rear_loading_available: r.rear_loading_available ?? false,
    timer: r.timer ?? 30,
    cabinets: r.cabinets,
    enabled: r.enabled,
  }),
  shown: ({ id: _id, api_key: _key, cabinets: _cabinets, ...rest }) => rest,
  nameOf: (k) => k.name,
  check: async (_tx, k) => checkCabinetKeys(k.cabinets ?? []),
  columns: (k, organizationId) => lockerColumns({ ...k, version: 2 }, organizationId, k.api_key ?? null),
  afterWrite: writeCabinets,
  deletes: (id) => [sql`DELETE FROM cabinets WHERE locker_id = ${id}`, sql`DELETE FROM lockers WHERE id = ${id}`],
  unique: { lockers_api_key_hash_key: 'api_key' },
};
