// Who may do what (contract sections 2 and 17), as a matrix: each role (an org admin, a location
// admin of store A, staff of store A, signed out) against every console page and action on the
// objects of store A, store B (the same organization) and another organization's store: the
// status the contract says (404 out of reach, 403 visible but not allowed, 401 signed out), and
// nothing stored changes where it refuses. Then every operation of the OpenAPI document given a
// person's session alone: the session is no bearer token, hub token, device key or secret, so no
// operation of those credentials takes it. Last, every read of a location (C7, D1, P1-P3 and the
// administration's lists) for each role, each token scope and signed out, at the three stores.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { refusalGuard, type Probe } from '../support/contract.ts';
import { openCfhRequest } from '../support/requests.ts';
import { fromPage, makePerson, signInHttp, type Signed } from '../support/people.ts';
import { freshId, makeWorld, provisionToken, testApp, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
let a: World;
let b: World;
let other: World;
const sessions: Record<string, Signed> = {};
/** An open request of each store, by location. */
const requests: Record<number, string> = {};

before(async () => {
  ctx = await testApp();
  a = await makeWorld(ctx.db, ctx.clock, { voiceHandlers: ['transcript'] });
  b = await makeWorld(ctx.db, ctx.clock, { organizationId: a.organizationId, voiceHandlers: ['transcript'] });
  other = await makeWorld(ctx.db, ctx.clock, { voiceHandlers: ['transcript'] });
  await applyProvisioning(ctx.db, ctx.clock, {
    cfh_outcomes: [a, b, other].map((w) => ({
      id: freshId(),
      location_id: w.locationId,
      key: 'helped',
      text_en: 'Helped',
      text_fr: 'Aidé',
    })),
  });
  const people = {
    'org admin': await makePerson(ctx.db, ctx.clock, a.organizationId, { name: 'Olga' }),
    'location admin of A': await makePerson(ctx.db, ctx.clock, a.organizationId, { name: 'Lea', role: 'location_admin', locationIds: [a.locationId] }),
    'staff of A': await makePerson(ctx.db, ctx.clock, a.organizationId, { name: 'Sami', role: 'staff', locationIds: [a.locationId] }),
  };
  for (const [role, person] of Object.entries(people)) sessions[role] = await signInHttp(ctx.app, person);
  for (const w of [a, b, other]) requests[w.locationId] = await openCfhRequest(ctx.app, w);
});

const STORES = { A: () => a, B: () => b, 'another organization': () => other } as const;
type Store = keyof typeof STORES;
type Role = 'org admin' | 'location admin of A' | 'staff of A' | 'signed out';
const ROLES: Role[] = ['org admin', 'location admin of A', 'staff of A', 'signed out'];

interface Action {
  name: string;
  /** What the action needs of a role: the store's work, or to administer it. */
  needs: 'work' | 'administer';
  probe: (w: World) => Promise<Probe>;
}

const post = (url: string, body: unknown): Probe => ({ method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const page = (name: string, needs: Action['needs'] = 'work'): Action => ({
  name: `the ${name.split('?')[0]} page`,
  needs,
  probe: async (w) => ({ method: 'GET', url: `/console/api/locations/${w.locationId}/${name}` }),
});

const ACTIONS: Action[] = [
  page('queue'),
  page('lockers'),
  page('devices'),
  page('radio'),
  page('webhooks', 'administer'),
  page('reports?from=2026-01-01&to=2026-01-31', 'administer'),
  page('requests.csv?from=2026-01-01&to=2026-01-31', 'administer'),
  { name: 'claim', needs: 'work', probe: async (w) => post(`/console/api/cfh/${requests[w.locationId]}/claim`, {}) },
  { name: 'open a cabinet', needs: 'work', probe: async (w) => post(`/console/api/cabinets/${w.cabinetIds[0]}/open`, { reason: 'matrix' }) },
  { name: 'disable a cabinet', needs: 'work', probe: async (w) => post(`/console/api/cabinets/${w.cabinetIds[1]}/disable`, {}) },
  { name: 'announce', needs: 'work', probe: async (w) => post(`/console/api/radio/${encodeURIComponent(w.edgeId)}/announce`, { text: 'Matrix test' }) },
];

/** The status a role gets for an action at a store (section 17). */
function expected(role: Role, store: Store, action: Action): number {
  if (role === 'signed out') return 401;
  const reaches = role === 'org admin' ? store !== 'another organization' : store === 'A';
  if (!reaches) return 404;
  if (action.needs === 'administer' && role === 'staff of A') return 403;
  return 200;
}

test('every console page and action, for each role at store A, store B and another organization: the status the contract says, and no change where refused', async () => {
  const guard = refusalGuard(ctx.app, ctx.db, [a, b, other]);
  const problems: string[] = [];
  // The refusals first, then what is allowed: a refused probe must find the object as it was.
  const cases = ROLES.flatMap((role) => (Object.keys(STORES) as Store[]).flatMap((store) => ACTIONS.map((action) => ({ role, store, action }))));
  cases.sort((x, y) => Number(expected(x.role, x.store, x.action) === 200) - Number(expected(y.role, y.store, y.action) === 200));
  for (const { role, store, action } of cases) {
    const probe = await action.probe(STORES[store]());
    const session = sessions[role];
    const headers: Record<string, string> = session === undefined ? {} : probe.method === 'GET' ? { cookie: session.cookie } : fromPage(session);
    const res = await guard({ ...probe, headers: { ...probe.headers, ...headers } });
    const want = expected(role, store, action);
    const got = res.statusCode === 202 ? 200 : res.statusCode;
    if (got !== want) problems.push(`${role} / ${action.name} at ${store}: ${res.statusCode}, expected ${want} (${res.body.slice(0, 120)})`);
  }
  assert.deepEqual(problems, []);
});

test("every operation of the OpenAPI document refuses a person's session alone: a session is not the credential of any of them", async () => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { operationId: string; security?: Record<string, unknown>[] }>>;
  }>();
  const admin = sessions['org admin'] as Signed;
  const problems: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      // Operations a session is a credential of, and those that need none, are not this test's.
      if (schemes.includes('session') || schemes.length === 0) continue;
      const url = path.replace(/\{location_id\}/g, String(a.locationId)).replace(/\{[^}]+\}/g, '1');
      const query = `location_id=${a.locationId}&edge_id=${encodeURIComponent(a.edgeId)}&message_id=x&from=2026-01-01&to=2026-01-02`;
      const res = await ctx.app.inject({
        method: method.toUpperCase() as 'GET',
        url: `${url}?${query}`,
        headers: { ...fromPage(admin), 'content-type': 'application/json' },
        payload: method === 'get' ? undefined : '{}',
      });
      // Refused for its credential (401, 403), or before it (the object a capability names is unknown,
      // a disabled broker endpoint, the body's form): never served.
      if (res.statusCode < 400 || res.statusCode >= 500) problems.push(`${op.operationId}: ${res.statusCode}`);
    }
  }
  assert.deepEqual(problems, []);
});

/** The reads that name a location, with the credential each takes: a token's scope, or administration. */
const LOCATION_READS: { op: string; url: (w: World) => string; scope: string }[] = [
  { op: 'listCfhRequests', url: (w) => `/api/callforhelp/requests?location_id=${w.locationId}`, scope: 'cfh' },
  { op: 'listDevices', url: (w) => `/api/devices?location_id=${w.locationId}`, scope: 'devices' },
  { op: 'getCfhReport', url: (w) => `/api/reports/cfh?location_id=${w.locationId}&from=2026-01-01&to=2026-01-02`, scope: 'reports' },
  { op: 'exportCfhRequests', url: (w) => `/api/reports/cfh/requests.csv?location_id=${w.locationId}&from=2026-01-01&to=2026-01-02`, scope: 'reports' },
  { op: 'getLockerReport', url: (w) => `/api/reports/lockers?location_id=${w.locationId}&from=2026-01-01&to=2026-01-02`, scope: 'reports' },
  { op: 'listPeople', url: (w) => `/api/admin/people?location_id=${w.locationId}`, scope: 'admin' },
  { op: 'listStoreDevices', url: (w) => `/api/admin/store_devices?location_id=${w.locationId}`, scope: 'admin' },
  { op: 'listAuditEntries', url: (w) => `/api/admin/audit?location_id=${w.locationId}`, scope: 'admin' },
];

test('every read of a location, for each role, each token scope and signed out, at store A, store B and another organization', async () => {
  const scopes = ['cfh', 'radio', 'buttons', 'reports', 'devices', 'webhooks', 'admin'] as const;
  const tokens: Record<string, { token: string; scopes: readonly string[]; onlyA: boolean }> = {};
  for (const scope of scopes)
    tokens[`a ${scope} token`] = { token: await provisionToken(ctx.db, ctx.clock, a.organizationId, [scope]), scopes: [scope], onlyA: false };
  tokens['an admin token limited to A'] = {
    token: await provisionToken(ctx.db, ctx.clock, a.organizationId, ['admin'], { locationIds: [a.locationId] }),
    scopes: ['admin'],
    onlyA: true,
  };
  const problems: string[] = [];
  for (const read of LOCATION_READS) {
    const administration = read.scope === 'admin';
    for (const store of Object.keys(STORES) as Store[]) {
      const url = read.url(STORES[store]());
      const ask = async (who: string, headers: Record<string, string>, want: number) => {
        const res = await ctx.app.inject({ method: 'GET', url, headers });
        if (res.statusCode !== want) problems.push(`${who} / ${read.op} at ${store}: ${res.statusCode}, expected ${want}`);
      };
      await ask('signed out', {}, 401);
      for (const [who, t] of Object.entries(tokens)) {
        const reaches = store === 'A' || (store === 'B' && !t.onlyA);
        await ask(who, { authorization: `Bearer ${t.token}` }, !t.scopes.includes(read.scope) ? 403 : reaches ? 200 : 404);
      }
      for (const role of ['org admin', 'location admin of A', 'staff of A'] as const) {
        const session = sessions[role] as Signed;
        // A session is a credential of administration only; the other reads take a bearer token.
        const reaches = role === 'org admin' ? store !== 'another organization' : store === 'A';
        const want = !administration ? 401 : role === 'staff of A' ? 403 : reaches ? 200 : 404;
        await ask(role, { cookie: session.cookie }, want);
      }
    }
  }
  assert.deepEqual(problems, []);
});
