// Who is acting, and what it may reach (contract sections 2, 9 and 17). Every request, job or device
// message that acts on the store acts as one Actor; every feature asks this module, and only this
// module, whether that actor may reach a location (here) or a row (reach-sql.ts: the same rule in
// SQL). The contract's next actors, a person (memberships, section 17) and a service account, are
// further members of the union: each carries a Reach, and the rule does not change.

/** What an actor of an organization may reach. */
export interface Reach {
  organizationId: number;
  /** The locations it is limited to; null: every location of its organization. A location
   * outside them is treated as another organization's (contract section 2). */
  locationIds: readonly number[] | null;
  /** The scopes of its token (section 2); a device's or a session's own work needs none. */
  scopes: readonly string[];
}

/** A bearer token (section 2): an integration, a chat platform, a call button hub. */
export interface ApiTokenActor {
  kind: 'api_token';
  tokenId: number;
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

/** A console session signed in with a token of the console scope (section 15; section 17's
 * person sessions replace it). */
export interface ConsoleSessionActor {
  kind: 'console_session';
  sessionId: number;
  /** The token that signed in: the session's steps are recorded with it. */
  tokenId: number;
  /** Who claims and completes requests from this session. */
  staffName: string;
  reach: Reach;
}

export type Actor = ApiTokenActor | DeviceActor | CustomerActor | ConsoleSessionActor;

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
  return actor.kind === 'api_token' || actor.kind === 'console_session' ? actor.tokenId : null;
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
