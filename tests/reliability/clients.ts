// What talks to the service processes in the reliability tests: the provisioned world (a
// PROVISION_FILE), an HTTP client that never hangs and never throws, and a locker device.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { atCleanup } from '../../scripts/lib/processes.ts';

export const SECRET = `reliability-${crypto.randomBytes(12).toString('hex')}`;

export interface RelWorld {
  file: string;
  organizationId: number;
  /** Location with the default CFH timeout. */
  locationId: number;
  /** Location whose CFH requests time out after 1 s. */
  quickLocationId: number;
  lockerId: number;
  lockerKey: string;
  cabinetIds: number[];
  quickCabinetIds: number[];
  quickLockerId: number;
  optionId: number;
  quickOptionId: number;
  token: string;
}

/** Writes a provisioning file: one organization, two locations (one with a 1-s CFH timeout), a
 * locker of `cabinets` cabinets at each, a CFH option at each and a token. */
export function writeWorld(dir: string, cabinets: number): RelWorld {
  const w: RelWorld = {
    file: path.join(dir, 'provision.json'),
    organizationId: 1,
    locationId: 10,
    quickLocationId: 11,
    lockerId: 100,
    quickLockerId: 101,
    lockerKey: crypto.randomBytes(18).toString('base64url'),
    cabinetIds: Array.from({ length: cabinets }, (_, i) => 1000 + i),
    quickCabinetIds: Array.from({ length: cabinets }, (_, i) => 2000 + i),
    optionId: 5,
    quickOptionId: 6,
    token: crypto.randomBytes(18).toString('base64url'),
  };
  const cabinetList = (ids: number[]) => ids.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' }));
  const option = (id: number, location: number) => ({
    id,
    organization_id: 1,
    location_id: location,
    text_en: 'Help',
    text_fr: 'Aide',
    prompt_en: 'Coming',
    prompt_fr: 'On arrive',
  });
  fs.writeFileSync(
    w.file,
    JSON.stringify({
      organizations: [{ id: 1, name: 'Acme' }],
      locations: [
        { id: w.locationId, organization_id: 1, name: 'Store 10', cfh_timeout_seconds: null },
        { id: w.quickLocationId, organization_id: 1, name: 'Store 11', cfh_timeout_seconds: 1 },
      ],
      lockers: [
        {
          id: w.lockerId,
          location_id: w.locationId,
          name: 'Front',
          version: 2,
          rear_loading_available: true,
          timer: 30,
          api_key: w.lockerKey,
          cabinets: cabinetList(w.cabinetIds),
        },
        {
          id: w.quickLockerId,
          location_id: w.quickLocationId,
          name: 'Back',
          version: 2,
          rear_loading_available: false,
          timer: 30,
          api_key: `${w.lockerKey}-2`,
          cabinets: cabinetList(w.quickCabinetIds),
        },
      ],
      cfh_options: [option(w.optionId, w.locationId), option(w.quickOptionId, w.quickLocationId)],
      api_tokens: [{ name: 'reliability', organization_id: 1, scopes: ['cfh'], token: w.token }],
    }),
  );
  return w;
}

export interface Answer {
  /** 0: no HTTP answer (connection refused or reset, or no answer within the time limit). */
  status: number;
  body: Record<string, unknown>;
  error: string | null;
  retryAfter: string | null;
  ms: number;
}

/** One request; never throws. No answer within `timeoutMs` (30 s) counts as a hang (status 0). */
export async function call(base: string, method: string, url: string, opts: { body?: unknown; token?: string; timeoutMs?: number } = {}): Promise<Answer> {
  const started = Date.now();
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  try {
    const res = await fetch(`${base}${url}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { text };
    }
    return { status: res.status, body, error: null, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { status: 0, body: {}, error: `${e.name}: ${e.cause?.code ?? e.cause?.message ?? e.message}`, retryAfter: null, ms: Date.now() - started };
  }
}

const secret = (url: string) => `${url}${url.includes('?') ? '&' : '?'}secret_token=${encodeURIComponent(SECRET)}`;

/** The operations the tests drive, against one instance's base URL. */
export function api(base: string, w: RelWorld) {
  return {
    listing: (locationId = w.locationId) => call(base, 'GET', secret(`/api/lockers/locations/${locationId}`)),
    createOrder: (cabinetId: number, orderId: number, lockerId = w.lockerId, locationId = w.locationId) =>
      call(base, 'POST', secret('/api/lockers/orders'), {
        body: { rearload: false, locker_id: lockerId, cabinet_id: cabinetId, order_id: orderId, organization_id: w.organizationId, location_id: locationId },
      }),
    command: (cabinetId: number, body: Record<string, unknown>) => call(base, 'PUT', secret(`/api/lockers/cabinets/${cabinetId}`), { body }),
    completeByCabinet: (cabinetId: number, body: Record<string, unknown> = {}) =>
      call(base, 'PUT', secret(`/api/lockers/orders/cabinets/${cabinetId}`), { body }),
    customer: (openCode: string, command: 'here' | 'agree' | 'disagree') =>
      call(base, 'POST', secret(`/api/lockers/cabinets/customers/${openCode}`), { body: { command } }),
    completeByCode: (openCode: string, body: Record<string, unknown> = {}) => call(base, 'PUT', secret(`/api/lockers/orders/customer/${openCode}`), { body }),
    createRequest: (locationId = w.locationId, optionId = w.optionId) =>
      call(base, 'POST', '/api/callforhelp/requests', { token: w.token, body: { location_id: locationId, option_id: optionId } }),
    claim: (messageId: string, who: string) =>
      call(base, 'POST', '/api/callforhelp/claim', {
        token: w.token,
        body: { message_id: messageId, channel_id: 'C1', claimed_by: who, claimed_by_user_id: `U-${who}` },
      }),
    track: (messageId: string) => call(base, 'GET', `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(messageId)}`, { token: w.token }),
    ready: () => call(base, 'GET', '/readyz', { timeoutMs: 10_000 }),
  };
}
export type Api = ReturnType<typeof api>;

/**
 * A locker device as firmware would be: persistent session, QoS 1 subscription on every connect,
 * reconnects by itself, acks every copy, and acts on a command_id once (remembering those it did).
 */
export class LockerDevice {
  readonly client: MqttClient;
  /** Every copy received, in arrival order. */
  readonly deliveries: string[] = [];
  /** command_ids acted on, once each, in the order they were first received. */
  readonly processed: string[] = [];
  /** What those commands said, in the same order: `<cabinet_key>:<command>`. */
  readonly actions: string[] = [];
  readonly #seen = new Set<string>();

  private constructor(client: MqttClient) {
    this.client = client;
  }

  static async connect(brokerUrl: string, lockerId: number, apiKey: string): Promise<LockerDevice> {
    const client = mqtt.connect(brokerUrl, {
      clientId: `locker-${lockerId}-${crypto.randomBytes(3).toString('hex')}`,
      clean: false,
      protocolVersion: 4,
      username: `locker:${lockerId}`,
      password: apiKey,
      reconnectPeriod: 300,
      connectTimeout: 5_000,
    });
    client.on('error', () => {}); // reconnects on its own
    const device = new LockerDevice(client);
    atCleanup(() => device.close());
    const inbox = `lockers/${lockerId}/commands`;
    const acks = `lockers/${lockerId}/acks`;
    client.on('message', (_topic, payload) => {
      const body = JSON.parse(payload.toString('utf8')) as { command_id?: string; cabinet_key?: number; command?: string };
      const id = String(body.command_id);
      device.deliveries.push(id);
      if (!device.#seen.has(id)) {
        device.#seen.add(id);
        device.processed.push(id);
        device.actions.push(`${String(body.cabinet_key)}:${String(body.command)}`);
      }
      client.publish(acks, JSON.stringify({ command_id: id, status: 'ok' }), { qos: 1 });
    });
    const subscribed = new Promise<void>((resolve) => {
      client.on('connect', () => {
        client.subscribe(inbox, { qos: 1 }, () => resolve());
      });
    });
    await subscribed;
    return device;
  }

  /** How many copies of each command_id arrived, for those that came more than once. */
  duplicates(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const id of this.deliveries) counts.set(id, (counts.get(id) ?? 0) + 1);
    return new Map([...counts].filter(([, n]) => n > 1));
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
