// A location (a store) as section 18 administers it: the provisioning file's entry with its
// Call for Help timers, locker hours and language. Only organization admins make one; a location
// admin changes its own. A location is never deleted (its history stays): enabled false retires it.
import { sql } from '../db/sql.ts';
import type { ObjectKind } from '../admin/objects.ts';
import type { ObjectRow } from '../admin/object-store.ts';
import { checkTimeZone, locationColumns, type Location } from '../provisioning/entries.ts';

export interface LocationRow extends ObjectRow, Omit<Location, 'id' | 'enabled' | 'organization_id'> {}

const SETTINGS = [
  'cfh_timeout_seconds',
  'store_number',
  'time_zone',
  'cfh_escalation_seconds',
  'cfh_reminder_seconds',
  'cfh_reminder_claimed_seconds',
  'cfh_reminder_cap_seconds',
  'cfh_auto_complete_seconds',
  'staff_name_format',
  'call_button_cooldown_seconds',
  'language',
] as const;

export const locationKind: ObjectKind<LocationRow, Location> = {
  type: 'location',
  what: 'location',
  source: {
    table: 'locations',
    select: sql`SELECT x.id, x.id AS location_id, x.organization_id, x.name, ${sql.raw(SETTINGS.map((s) => `x.${s}`).join(', '))},
      x.locker_pickup_hours::float8 AS locker_pickup_hours, x.locker_reminder_hours::float8 AS locker_reminder_hours,
      x.enabled, x.version, x.managed_by, x.created_at, x.updated_at FROM locations x`,
    organization: sql`x.organization_id`,
    location: sql`x.id`,
    versionColumn: 'version',
    sequence: 'locations_admin_id',
  },
  entryOf: (r) => {
    const entry: Location = { id: r.id, organization_id: r.organization_id, name: r.name };
    for (const s of SETTINGS) (entry as Record<string, unknown>)[s] = r[s] ?? null;
    entry.locker_pickup_hours = r.locker_pickup_hours ?? null;
    entry.locker_reminder_hours = r.locker_reminder_hours ?? null;
    entry.enabled = r.enabled;
    return entry;
  },
  shown: ({ id: _id, ...rest }) => rest,
  nameOf: (l) => l.name,
  check: (tx, l) => checkTimeZone(tx, l.time_zone),
  columns: (l, organizationId) => locationColumns({ ...l, organization_id: organizationId }),
  organizationOnly: true,
  auditLocation: (l) => l.id,
  unique: {},
};
