// The benchmark's world: a chain of realistic size, provisioned through the service's own file format.
import crypto from 'node:crypto';

export interface BenchWorld {
  file: Record<string, unknown>;
  organizationId: number;
  locations: number[];
  /** locker id -> its location, api key and cabinet ids */
  lockers: { id: number; locationId: number; apiKey: string; cabinets: { id: number; key: number }[] }[];
  optionByLocation: Map<number, number>;
  token: string;
  edge: { edgeId: string; key: string };
  /** A person of the organization (an org_admin) whose password the bench sets (bench/harness/people.ts). */
  person: { email: string; password: string };
  /**
   * People who sign in during the sign-in load (bench/scenarios/sign-in-load.ts), each in turn, with
   * the same password: one email signing in 20 times a second would meet its own throttle (an
   * attempt counts as failed until its hash has been checked, and 10 may be pending at most).
   */
  signInPeople: { email: string; password: string }[];
}

/** How many people take turns signing in during the sign-in load. */
export const SIGN_IN_PEOPLE = 40;

/** The provisioning file's CFH options of a bench world: one per location, `optionByLocation`. */
export function benchOptions(organizationId: number, optionByLocation: ReadonlyMap<number, number>) {
  return [...optionByLocation].map(([locationId, id]) => ({
    id,
    organization_id: organizationId,
    location_id: locationId,
    text_en: 'Help',
    text_fr: 'Aide',
    prompt_en: 'Someone is coming',
    prompt_fr: "Quelqu'un arrive",
  }));
}

export function makeBenchWorld(opts: { locations: number; lockersPerLocation: number; cabinetsPerLocker: number }): BenchWorld {
  const organizationId = 1;
  const token = `bench-token-${crypto.randomBytes(12).toString('hex')}`;
  const edge = { edgeId: 'bench-radio', key: `bench-edge-${crypto.randomBytes(12).toString('hex')}` };
  const password = `bench-pw-${crypto.randomBytes(12).toString('base64url')}`;
  const person = { email: 'bench.admin@example.com', password };
  const signInPeople = Array.from({ length: SIGN_IN_PEOPLE }, (_, i) => ({ email: `bench.staff.${i + 1}@example.com`, password }));
  const locations: number[] = [];
  const lockers: BenchWorld['lockers'] = [];
  const optionByLocation = new Map<number, number>();
  for (let l = 1; l <= opts.locations; l++) {
    const locationId = 1000 + l;
    locations.push(locationId);
    optionByLocation.set(locationId, 5000 + l);
    for (let k = 1; k <= opts.lockersPerLocation; k++) {
      const id = locationId * 100 + k;
      lockers.push({
        id,
        locationId,
        apiKey: `bench-locker-${id}-${crypto.randomBytes(8).toString('hex')}`,
        cabinets: Array.from({ length: opts.cabinetsPerLocker }, (_, c) => ({ id: id * 100 + c + 1, key: c + 1 })),
      });
    }
  }
  const file = {
    organizations: [{ id: organizationId, name: 'Bench Grocery' }],
    locations: locations.map((id) => ({ id, organization_id: organizationId, name: `Store ${id}`, cfh_timeout_seconds: 3600 })),
    lockers: lockers.map((k) => ({
      id: k.id,
      location_id: k.locationId,
      name: `Lockers ${k.id}`,
      version: 2,
      rear_loading_available: true,
      timer: 30,
      api_key: k.apiKey,
      cabinets: k.cabinets.map((c) => ({ id: c.id, key: c.key, size: 'medium', thermal_mode: 'ambient' })),
    })),
    cfh_options: benchOptions(organizationId, optionByLocation),
    radio_edges: [{ edge_id: edge.edgeId, location_id: locations[0], name: 'Bench radio', device_key: edge.key, voice_handlers: [] }],
    api_tokens: [{ name: 'bench', organization_id: organizationId, scopes: ['cfh', 'radio', 'reports'], token }],
    // Provisioning never carries a password: the bench sets it in the database once the service runs.
    people: [
      { email: person.email, name: 'Bench Admin', organization_id: organizationId, memberships: [{ role: 'org_admin' }] },
      ...signInPeople.map((p, i) => ({
        email: p.email,
        name: `Bench Staff ${i + 1}`,
        organization_id: organizationId,
        memberships: [{ role: 'staff', location_ids: [locations[i % locations.length]] }],
      })),
    ],
  };
  return { file, organizationId, locations, lockers, optionByLocation, token, edge, person, signInPeople };
}
