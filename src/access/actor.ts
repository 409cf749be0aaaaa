// Who is acting, and what it may reach (contract sections 2, 9 and 17). Every request, job or device
// message that acts on the store acts as one Actor; every feature asks this module, and only this
// module, whether that actor may reach a location (here) or a row (reach-sql.ts: the same rule in
// SQL), and whether it may do a kind of work there (mayDo: a person's role, a token's scope).

/** What an actor of an organization may reach. */
export interface Reach {
  organizationId: number;
  /** The locations it is limited to; null: every location of its organization. A location
   * outside them is treated as another organization's (contract section 2). */
  locationIds: readonly number[] | null;
  /** The scopes of its token (section 2); a device's or a session's own work needs none. */
  scopes: readonly string[];
}

/** A bearer token (section 2) of a service account (section 17): an integration, a chat platform,
 * a call button hub. Its scopes say which operations it may call. */
export interface ApiTokenActor {
  kind: 'api_token';
  tokenId: number;
  serviceAccountId: number;
  /** The service account's name, as the audit log shows it. */
  serviceAccountName: string;
  reach: Reach;
}

export type DeviceKind = 'locker' | 'call_button' | 'display' | 'edge_device';

/** A device acting with its own credential (its key, or its being the device a message came
 * from): it reaches its own location only. */
export interface DeviceActor {
  kind: 'device';
  device: DeviceKind;
  /** The device's id as its feature names it (an edge device's edge_id, a display's id). */
  deviceId: string;
  reach: Reach;
}

/** What a customer holds: possessing it is the credential (section 2, capabilities). */
export type Capability = 'message_id' | 'open_code' | 'display_key';

/**
 * A customer holding a capability. It belongs to no organization: it reaches the one object its
 * capability names, wherever that is, so a lookup by the capability is what limits it.
 */
export interface CustomerActor {
  kind: 'customer';
  capability: Capability;
}

/** The roles of section 17, most powerful first. */
export const ROLES = ['org_admin', 'location_admin', 'staff'] as const;
export type Role = (typeof ROLES)[number];

/** A role over some locations; an org_admin's covers the whole organization (locationIds null). */
export interface Membership {
  role: Role;
  locationIds: readonly number[] | null;
}

/** A person signed in to a session (section 17). Its reach is every location a membership names
 * (null: the whole organization, an org_admin); what it may do there is its role's (mayDo). */
export interface PersonActor {
  kind: 'person';
  personId: number;
  name: string;
  email: string;
  sessionId: number;
  /** The enrolled store device a shift session was signed in on (badge or PIN), if any. */
  storeDeviceId: number | null;
  memberships: readonly Membership[];
  /** A one-time password signed in: nothing but changing it is allowed until it is changed. */
  mustChangePassword: boolean;
  reach: Reach;
}

export type Actor = ApiTokenActor | DeviceActor | CustomerActor | PersonActor;

/** An actor of an organization: every one but a customer. */
export type OrganizationActor = Exclude<Actor, CustomerActor>;

export const customerActor = (capability: Capability): CustomerActor => ({ kind: 'customer', capability });

/** A device of a location, acting there only. */
export function deviceActor(device: DeviceKind, deviceId: string | number, place: { organizationId: number; locationId: number }): DeviceActor {
  return { kind: 'device', device, deviceId: String(deviceId), reach: { organizationId: place.organizationId, locationIds: [place.locationId], scopes: [] } };
}

/** The actor's organization; null for a customer, who has none. */
export const organizationOf = (actor: Actor): number | null => (actor.kind === 'customer' ? null : actor.reach.organizationId);

/** The API token the actor's steps are recorded with, if it acts with one. */
export function tokenOf(actor: Actor): number | null {
  return actor.kind === 'api_token' ? actor.tokenId : null;
}

/**
 * May this actor reach something at this place? An organization's actor: the place must be of
 * its organization and, when it is limited to some locations, at one of them (a place of no
 * location, such as an organization-wide webhook endpoint, is then out of reach). A customer:
 * yes, for what its capability found; never ask it of a place the customer chose.
 */
export function mayReach(actor: Actor, place: { organizationId: number; locationId: number | null }): boolean {
  if (actor.kind === 'customer') return true;
  const { organizationId, locationIds } = actor.reach;
  if (place.organizationId !== organizationId) return false;
  return locationIds === null || (place.locationId !== null && locationIds.includes(place.locationId));
}

export const hasScope = (actor: Actor, scope: string): boolean => actor.kind !== 'customer' && actor.reach.scopes.includes(scope);

/**
 * What a place asks of an actor beyond reaching it (section 17): `work` is the store's daily work
 * (the CFH queue, lockers, radio, devices), `reports` the reports, `administer` the setup, people,
 * webhooks and the audit log of the place.
 */
export type Ability = 'work' | 'reports' | 'administer';

const ROLE_ABILITIES: Readonly<Record<Role, readonly Ability[]>> = {
  org_admin: ['work', 'reports', 'administer'],
  location_admin: ['work', 'reports', 'administer'],
  staff: ['work'],
};

/** The token scope that gives an ability (section 2): `admin` is section 18's. */
const ABILITY_SCOPES: Readonly<Record<Ability, string>> = { work: 'cfh', reports: 'reports', administer: 'admin' };

/** The memberships' locations as a reach: null when one of them covers the organization. */
export function reachOfMemberships(memberships: readonly Membership[]): readonly number[] | null {
  if (memberships.some((m) => m.locationIds === null)) return null;
  return [...new Set(memberships.flatMap((m) => m.locationIds ?? []))].sort((a, b) => a - b);
}

/**
 * May the actor do this at a place it reaches (mayReach first: out of reach is 404, this is the
 * 403)? A place of no location (organization-wide: its people, service accounts, SSO mappings,
 * webhooks of the whole organization) asks for an org_admin, or a token limited to no location.
 */
export function mayDo(actor: Actor, ability: Ability, place: { organizationId: number; locationId: number | null }): boolean {
  if (!mayReach(actor, place)) return false;
  if (actor.kind === 'api_token')
    return actor.reach.scopes.includes(ABILITY_SCOPES[ability]) && (place.locationId !== null || actor.reach.locationIds === null);
  if (actor.kind !== 'person') return false;
  return actor.memberships.some(
    (m) => ROLE_ABILITIES[m.role].includes(ability) && (m.locationIds === null || (place.locationId !== null && m.locationIds.includes(place.locationId))),
  );
}

/** The role that may grant a role: nobody grants beyond their own (a location_admin never grants
 * org_admin), and only over places they administer (checked with mayDo by the caller). */
export function mayGrant(actor: Actor, role: Role): boolean {
  if (actor.kind === 'api_token') return role !== 'org_admin' || actor.reach.locationIds === null;
  if (actor.kind !== 'person') return false;
  if (role === 'org_admin') return actor.memberships.some((m) => m.role === 'org_admin');
  return actor.memberships.some((m) => m.role !== 'staff');
}

/** The person's most powerful role at a location, if any. */
export function roleAt(person: PersonActor, locationId: number): Role | null {
  for (const role of ROLES) if (person.memberships.some((m) => m.role === role && (m.locationIds === null || m.locationIds.includes(locationId)))) return role;
  return null;
}

/**
 * The person as far as an ability goes: only the memberships whose role has it, and the reach they
 * give. A feature that reads by reach then finds nothing where the person may not do this; null
 * when the person may do it nowhere (403).
 */
export function narrowedTo(person: PersonActor, ability: Ability): PersonActor | null {
  const memberships = person.memberships.filter((m) => ROLE_ABILITIES[m.role].includes(ability));
  if (memberships.length === 0) return null;
  return { ...person, memberships, reach: { ...person.reach, locationIds: reachOfMemberships(memberships) } };
}
