// One rule of reach, answered twice: in JavaScript (mayReach) for what a use case already holds, in
// SQL (reachSql) for the rows a statement finds. They must agree for every actor and every place,
// or a feature would 404 in one path what it shows in another.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { customerActor, deviceActor, mayReach, type Actor, type OrganizationActor } from '../../src/access/actor.ts';
import { reachedLocations, reachesLocation } from '../../src/access/locations.ts';
import { reachSql } from '../../src/access/reach-sql.ts';
import { sql } from '../../src/db/sql.ts';
import { testDb } from '../support/world.ts';

const db = await testDb();

const ORG_A = 9101;
const ORG_B = 9102;
const A1 = 9111;
const A2 = 9112;
const B1 = 9121;

before(async () => {
  await db.query('INSERT INTO organizations (id, name) VALUES ($1, $2), ($3, $4)', [ORG_A, 'Reach A', ORG_B, 'Reach B']);
  await db.query('INSERT INTO locations (id, organization_id, name) VALUES ($1, $2, $3), ($4, $2, $5), ($6, $7, $8)', [
    A1,
    ORG_A,
    'A one',
    A2,
    'A two',
    B1,
    ORG_B,
    'B one',
  ]);
});

const token = (organizationId: number, locationIds: readonly number[] | null): Actor => ({
  kind: 'api_token',
  tokenId: 1,
  serviceAccountId: 1,
  serviceAccountName: 'bot',
  reach: { organizationId, locationIds, scopes: ['cfh'] },
});

const ACTORS: Record<string, Actor> = {
  'a token of A': token(ORG_A, null),
  'a token of A limited to A1': token(ORG_A, [A1]),
  'a token of A limited to A1 and A2': token(ORG_A, [A1, A2]),
  'a token of A limited to no location': token(ORG_A, []),
  "a token of A limited to B's location": token(ORG_A, [B1]),
  'an edge device at A2': deviceActor('edge_device', 'edge-a2', { organizationId: ORG_A, locationId: A2 }),
  'an org_admin of B': {
    kind: 'person',
    personId: 1,
    name: 'Bea',
    email: 'bea@example.com',
    sessionId: 1,
    storeDeviceId: null,
    memberships: [{ role: 'org_admin', locationIds: null }],
    mustChangePassword: false,
    reach: { organizationId: ORG_B, locationIds: null, scopes: [] },
  },
  'staff of A at A2': {
    kind: 'person',
    personId: 2,
    name: 'Sam',
    email: 'sam@example.com',
    sessionId: 2,
    storeDeviceId: null,
    memberships: [{ role: 'staff', locationIds: [A2] }],
    mustChangePassword: false,
    reach: { organizationId: ORG_A, locationIds: [A2], scopes: [] },
  },
  'a customer holding a message_id': customerActor('message_id'),
};

/** Places a row can be at: a location, or none (an organization-wide webhook endpoint). */
const PLACES = [
  { name: 'A1', organizationId: ORG_A, locationId: A1 },
  { name: 'A2', organizationId: ORG_A, locationId: A2 },
  { name: 'A, organization-wide', organizationId: ORG_A, locationId: null },
  { name: 'B1', organizationId: ORG_B, locationId: B1 },
  { name: 'B, organization-wide', organizationId: ORG_B, locationId: null },
];

/** The places whose rows the statement finds for the actor. */
async function reachedInSql(actor: Actor): Promise<string[]> {
  const rows = sql.join(PLACES.map((p) => sql`(${p.name}::text, ${p.organizationId}::int, ${p.locationId}::int)`));
  const found = await db.run<{ name: string }>(
    sql`SELECT p.name FROM (VALUES ${rows}) AS p (name, organization_id, location_id) WHERE ${reachSql(actor, sql.raw('p'))}`,
  );
  return found.map((r) => r.name).sort();
}

const reachedInJs = (actor: Actor) =>
  PLACES.filter((p) => mayReach(actor, p))
    .map((p) => p.name)
    .sort();

test('the JavaScript answer and the SQL predicate agree for every actor at every place', async () => {
  for (const [name, actor] of Object.entries(ACTORS)) {
    assert.deepEqual(await reachedInSql(actor), reachedInJs(actor), name);
  }
});

test('an actor reaches its own organization, only its locations when it is limited, and nothing organization-wide then', () => {
  const expected: Record<string, string[]> = {
    'a token of A': ['A, organization-wide', 'A1', 'A2'],
    'a token of A limited to A1': ['A1'],
    'a token of A limited to A1 and A2': ['A1', 'A2'],
    'a token of A limited to no location': [],
    "a token of A limited to B's location": [],
    'an edge device at A2': ['A2'],
    'an org_admin of B': ['B, organization-wide', 'B1'],
    'staff of A at A2': ['A2'],
    'a console session of B': ['B, organization-wide', 'B1'],
    'a customer holding a message_id': PLACES.map((p) => p.name).sort(),
  };
  for (const [name, actor] of Object.entries(ACTORS)) assert.deepEqual(reachedInJs(actor), expected[name], name);
});

test('the locations an actor reaches are read with the same rule, and a location that does not exist is reached by no one', async () => {
  const ours = new Set([A1, A2, B1]);
  for (const [name, actor] of Object.entries(ACTORS)) {
    if (actor.kind === 'customer') continue;
    const staff: OrganizationActor = actor;
    const listed = (await reachedLocations(db, staff)).map((l) => l.id).filter((id) => ours.has(id));
    const expected = PLACES.filter((p) => p.locationId !== null && mayReach(staff, p)).map((p) => p.locationId);
    assert.deepEqual(listed.sort(), expected.sort(), name);
    for (const id of [A1, A2, B1]) assert.equal(await reachesLocation(db, staff, id), listed.includes(id), `${name} at ${id}`);
    assert.equal(await reachesLocation(db, staff, 9199), false, `${name} at an unknown location`);
  }
});
