// The load scenarios: each returns autocannon options for one running service.
import type { Options } from 'autocannon';
import type { BenchSession } from '../harness/people.ts';
import type { BenchWorld } from '../harness/world.ts';

export interface ScenarioInput {
  url: string;
  world: BenchWorld;
  secret: string;
  /** cabinets with no open order, for the order cycle */
  freeCabinets: { lockerId: number; locationId: number; cabinetId: number }[];
  /** message ids of seeded CFH requests, for the status read */
  messageIds: string[];
  /** The world's person signed in once for the run (bench/harness/people.ts), for the console's reads. */
  session: BenchSession;
}

export interface Scenario {
  name: string;
  /** HTTP requests per unit of work (a cycle), to report cycles per second */
  requestsPerCycle: number;
  options(input: ScenarioInput): Partial<Options>;
  /** A read: every request it may make (path and headers), for its same-payload ceiling. */
  reads?(input: ScenarioInput): { path: string; headers: Record<string, string> }[];
}

type Ctx = Record<string, unknown>;
type Step = NonNullable<Options['requests']>[number];
interface StepSpec {
  method: 'GET' | 'POST' | 'PUT';
  path?: string;
  headers?: Record<string, string>;
  /** per request: what to change of it, from the connection's context */
  setup?: (ctx: Ctx) => { path?: string; body?: string; headers?: Record<string, string> };
  onResponse?: (status: number, body: string, ctx: Ctx) => void;
}

/** One request of a scenario, with typed access to the connection's context. */
function step(spec: StepSpec): Step {
  const { setup, onResponse } = spec;
  return {
    method: spec.method,
    ...(spec.path ? { path: spec.path } : {}),
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(setup ? { setupRequest: (req, context) => ({ ...req, ...setup(context as Ctx) }) } : {}),
    ...(onResponse ? { onResponse: (status, body, context) => onResponse(status, body, context as Ctx) } : {}),
  } as Step;
}
const json = { 'content-type': 'application/json' };
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
let orderSeq = 50_000_000;
const l1Path = (locationId: number, secret: string) => `/api/lockers/locations/${locationId}?secret_token=${secret}`;
const queuePath = (locationId: number) => `/console/api/locations/${locationId}/queue`;
const c5Path = (messageId: string) => `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(messageId)}`;

export const scenarios: Scenario[] = [
  {
    name: 'L1 read',
    requestsPerCycle: 1,
    options: ({ world, secret }) => ({
      requests: [step({ method: 'GET', setup: () => ({ path: l1Path(pick(world.locations), secret) }) })],
    }),
    reads: ({ world, secret }) => world.locations.map((id) => ({ path: l1Path(id, secret), headers: {} })),
  },
  {
    name: 'order cycle (L2, L5 agree, L6)',
    requestsPerCycle: 3,
    options: ({ world, secret, freeCabinets }) => ({
      requests: [
        step({
          method: 'POST',
          headers: json,
          setup: (ctx) => {
            const cabinet = freeCabinets.shift();
            if (cabinet === undefined) throw new Error('the benchmark ran out of free cabinets');
            ctx.cabinet = cabinet;
            return {
              path: `/api/lockers/orders?secret_token=${secret}`,
              body: JSON.stringify({
                rearload: false,
                locker_id: cabinet.lockerId,
                cabinet_id: cabinet.cabinetId,
                order_id: orderSeq++,
                organization_id: world.organizationId,
                location_id: cabinet.locationId,
              }),
            };
          },
          onResponse: (status, body, ctx) => {
            if (status === 201) ctx.openCode = (JSON.parse(body) as { open_code: string }).open_code;
            else freeCabinets.push(ctx.cabinet as ScenarioInput['freeCabinets'][number]);
          },
        }),
        step({
          method: 'POST',
          headers: json,
          setup: (ctx) => ({ path: `/api/lockers/cabinets/customers/${String(ctx.openCode)}?secret_token=${secret}`, body: '{"command":"agree"}' }),
        }),
        step({
          method: 'PUT',
          headers: json,
          setup: (ctx) => ({ path: `/api/lockers/orders/customer/${String(ctx.openCode)}?secret_token=${secret}`, body: '{}' }),
          onResponse: (_status, _body, ctx) => {
            freeCabinets.push(ctx.cabinet as ScenarioInput['freeCabinets'][number]);
          },
        }),
      ],
    }),
  },
  {
    name: 'C5 read',
    requestsPerCycle: 1,
    options: ({ world, messageIds }) => ({
      requests: [
        step({
          method: 'GET',
          headers: { authorization: `Bearer ${world.token}` },
          setup: () => ({ path: c5Path(pick(messageIds)) }),
        }),
      ],
    }),
    reads: ({ world, messageIds }) => messageIds.map((id) => ({ path: c5Path(id), headers: { authorization: `Bearer ${world.token}` } })),
  },
  {
    name: 'CFH cycle (C0, C1, C3)',
    requestsPerCycle: 3,
    options: ({ world }) => {
      const headers = { ...json, authorization: `Bearer ${world.token}` };
      const staff = { channel_id: 'C0BENCH', claimed_by: 'Bench Staff', claimed_by_user_id: 'U0BENCH', request_from: 'provider_a' };
      return {
        requests: [
          step({
            method: 'POST',
            path: '/api/callforhelp/requests',
            headers,
            setup: () => {
              const locationId = pick(world.locations);
              return { body: JSON.stringify({ location_id: locationId, option_id: world.optionByLocation.get(locationId) }) };
            },
            onResponse: (status, body, ctx) => {
              if (status === 201) ctx.messageId = (JSON.parse(body) as { message_id: string }).message_id;
            },
          }),
          step({
            method: 'POST',
            path: '/api/callforhelp/claim',
            headers,
            setup: (ctx) => ({ body: JSON.stringify({ message_id: ctx.messageId, ...staff }) }),
          }),
          step({
            method: 'POST',
            path: '/api/callforhelp/complete',
            headers,
            setup: (ctx) => ({ body: JSON.stringify({ message_id: ctx.messageId, ...staff, customer_status: 'helped' }) }),
          }),
        ],
      };
    },
  },
  {
    name: 'L7 device report',
    requestsPerCycle: 1,
    options: ({ world }) => ({
      requests: [
        step({
          method: 'POST',
          path: '/api/lockers/cabinet/status',
          setup: () => {
            const locker = pick(world.lockers);
            const cabinet = pick(locker.cabinets);
            return {
              headers: { ...json, 'api-key': locker.apiKey },
              body: JSON.stringify({
                cabinets: [{ key: cabinet.key, front_status: 'closed', rear_status: 'closed' }],
                locker_info: { ip: '10.0.0.7', firmware: '2.4.1' },
                event: { type: 'active' },
              }),
            };
          },
        }),
      ],
    }),
  },
  // Issue 32: what a person's session costs a read. The console's queue page (its session found by
  // one statement, then the page's own reads), and getSession signed in and signed out: the same
  // route with and without the session's statement, so their difference is the lookup's cost.
  {
    name: 'console queue read (signed in)',
    requestsPerCycle: 1,
    options: ({ world, session }) => ({
      requests: [step({ method: 'GET', headers: { cookie: session.cookie }, setup: () => ({ path: queuePath(pick(world.locations)) }) })],
    }),
  },
  {
    name: 'session read (signed in)',
    requestsPerCycle: 1,
    options: ({ session }) => ({ requests: [step({ method: 'GET', path: '/api/session', headers: { cookie: session.cookie } })] }),
  },
  {
    name: 'session read (signed out)',
    requestsPerCycle: 1,
    options: () => ({ requests: [step({ method: 'GET', path: '/api/session' })] }),
  },
];

/** Issue 29's scenarios (the embedded server against the machine's PostgreSQL). */
export const ISSUE_29_SCENARIOS: readonly string[] = ['L1 read', 'order cycle (L2, L5 agree, L6)', 'C5 read', 'CFH cycle (C0, C1, C3)', 'L7 device report'];
