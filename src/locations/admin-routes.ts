// Section 18's locations over HTTP: listLocations, getLocation, createLocation (organization
// admins) and updateLocation (a location admin: its own). No delete: a store's history stays;
// `enabled: false` retires it.
import { objectRoutes } from '../admin/object-routes.ts';
import type { Entry, ObjectKind } from '../admin/objects.ts';
import { objectSchemas } from '../admin/schemas.ts';
import { LocationEntry } from '../provisioning/schema.ts';
import { locationKind, type LocationRow } from './kind.ts';

export const LocationSchemas = objectSchemas('Location', LocationEntry.properties, {
  optional: ['organization_id'],
  fixed: ['organization_id'],
  description:
    'a store: its Call for Help timers (escalation, reminders, automatic completion; null: the service default), locker hours, language and time zone',
});

export const locationRoutes = objectRoutes<LocationRow>({
  path: '/api/admin/locations',
  kind: locationKind as unknown as ObjectKind<LocationRow, Entry>,
  plural: 'locations',
  operations: { list: 'listLocations', get: 'getLocation', create: 'createLocation', update: 'updateLocation' },
  schemas: LocationSchemas,
  // A location's location_id is itself: only its id is shown.
  view: (row) => Object.fromEntries(Object.entries(row).filter(([k]) => k !== 'location_id')),
  descriptions: {
    create: 'Organization admins only. It appears in the console of everyone who reaches it at once, on every instance.',
    update:
      'A location admin changes its own locations. A new timer applies to the requests created after it; `enabled: false` retires the ' +
      'store (its devices and customer pages are refused, its history stays).',
  },
});
