// The load of the version 2 soak (bench/soak/v2.ts): loops at fixed intervals until the deadline,
// each doing what a store does, spread over the instances (round robin per request). Every answer
// is checked against the statuses that operation may give here; anything else is unexpected.
import type { Service } from '../../scripts/lib/processes.ts';
import type { Edge, Tally } from './devices.ts';
import type { SoakLocation, SoakWorld } from './world.ts';

export interface Driver {
  call(
    op: string,
    method: string,
    url: string,
    opts?: {
      body?: unknown;
      form?: Record<string, string>;
      signWith?: string;
      headers?: Record<string, string>;
      expect?: number[];
      instance?: Service;
    },
  ): Promise<{ status: number; json: Record<string, unknown>; ok: boolean }>;
  instances: number;
}

interface Ctx {
  deadline: number;
  edges: Map<string, Edge>;
  lockers: Map<number, (key: number, command: string) => void>;
  recent: string[];
  tally: Tally;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
const between = (a: number, b: number) => a + Math.random() * (b - a);

export async function runStaff(d: Driver, w: SoakWorld, ctx: Ctx): Promise<void> {
  const bearer = { authorization: `Bearer ${w.token}` };
  const hub = { authorization: `Basic ${w.hubToken}` };
  const q = `secret_token=${encodeURIComponent(w.secret)}`;
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const every = (ms: number, fn: () => Promise<unknown>) =>
    (async () => {
      await sleep(Math.random() * ms);
      while (Date.now() < ctx.deadline) {
        const t0 = Date.now();
        await fn().catch((err: Error) => ctx.tally.unexpected('loop', err.stack ?? err.message));
        await sleep(Math.max(0, ms - (Date.now() - t0)));
      }
    })();
  let n = 0;
  const who = (messageId: string, name: string) => ({ message_id: messageId, channel_id: 'C-floor', claimed_by: name, claimed_by_user_id: `U-${name}` });

  /** What staff do with a new request: claim and finish on the API, claim only (automatic completion),
   * claim by voice, let the customer cancel, or nothing (escalation, reminders, timeout). */
  const staff = (l: SoakLocation, messageId: string, button?: string) =>
    track(
      (async () => {
        ctx.recent.push(messageId);
        if (ctx.recent.length > 50) ctx.recent.shift();
        const r = Math.random();
        await sleep(between(2_000, 8_000));
        await d.call('C5', 'GET', `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(messageId)}`);
        if (r < 0.4) {
          const name = pick(['Ann Lee', 'Bob Roy', 'Cy Tran']);
          const claimed = await d.call('C1', 'POST', '/api/callforhelp/claim', { headers: bearer, body: who(messageId, name) });
          if (claimed.json.success !== true) return;
          if (r < 0.1) return; // automatic completion
          await sleep(between(1_000, 4_000));
          await d.call('C2', 'POST', '/api/callforhelp/on_the_way', { headers: bearer, body: who(messageId, name) });
          await sleep(between(2_000, 6_000));
          if (button !== undefined && r < 0.2) {
            await d.call('B2', 'PUT', `/api/callbutton/${encodeURIComponent(messageId)}`, {
              headers: hub,
              body: { device_key: button, update_type: pick(['completed', 'close']), reason: 'helped' },
              expect: [200, 404],
            });
          } else {
            await d.call('C3', 'POST', '/api/callforhelp/complete', { headers: bearer, body: { ...who(messageId, name), customer_status: 'sale' } });
          }
        } else if (r < 0.55) {
          const edge = ctx.edges.get(l.edgeId) as Edge;
          edge.heard(pick(["I'm on it", "I've got it", 'I will do it']), pick(['Sam', 'Dee']));
          await sleep(between(2_000, 5_000));
          edge.heard(pick(["I'm on my way", 'heading there now']), 'Sam');
        } else if (r < 0.65) {
          await d.call('C4', 'POST', '/api/callforhelp/cancel', { body: { message_id: messageId }, expect: [200, 409] });
        } else if (r < 0.7 && button !== undefined) {
          await d.call('B2', 'PUT', `/api/callbutton/${encodeURIComponent(messageId)}`, {
            headers: hub,
            body: { device_key: button, update_type: 'customer_canceled' },
            expect: [200, 404],
          });
        }
        // else: nobody comes; it escalates, is reminded of, and times out.
      })(),
    );

  const loops: Promise<void>[] = [];
  for (const l of w.locations) {
    // C0, the chat integration's path.
    loops.push(
      every(6_000, async () => {
        const made = await d.call('C0', 'POST', '/api/callforhelp/requests', { headers: bearer, body: { location_id: l.id, option_id: l.optionId } });
        if (made.ok) staff(l, made.json.message_id as string);
      }),
    );
    // B1: presses of random buttons (a button pressed again within its cooldown is 429), and battery reports.
    loops.push(
      every(4_000, async () => {
        const button = pick(l.buttons).deviceKey;
        const res = await d.call('B1', 'POST', '/api/callbutton/press', {
          headers: hub,
          body: { device_key: button, voltage: between(2.2, 3.1) },
          expect: [200, 429],
        });
        if (res.status === 200) staff(l, String(res.json.text).trim(), button);
        if (Math.random() < 0.2)
          await d.call('B1 voltage', 'POST', '/api/callbutton/press', {
            headers: hub,
            body: { device_key: pick(l.buttons).deviceKey, voltage: between(2.2, 3.1), button: 0 },
          });
      }),
    );
    // C9: the display's page and its requests (one per client address per cooldown).
    loops.push(
      every(9_000, async () => {
        await d.call('display page', 'GET', `/help/${encodeURIComponent(l.displayKey)}`);
        const body =
          Math.random() < 0.3
            ? { custom_text: `Need a hand in aisle ${Math.floor(between(1, 30))}` }
            : { option_id: Math.random() < 0.2 ? l.recordOnlyOptionId : l.optionId };
        const res = await d.call('C9', 'POST', `/api/callforhelp/displays/${encodeURIComponent(l.displayKey)}/requests`, { body, expect: [201, 429] });
        if (res.status === 201) {
          await d.call('tracking page', 'GET', `/help/t/${encodeURIComponent(res.json.message_id as string)}`);
          staff(l, res.json.message_id as string);
        }
      }),
    );
    // R1 from an integration, R2 from the messaging provider.
    loops.push(
      every(12_000, async () => {
        await d.call('R1', 'POST', '/webhooks/incoming/generic', {
          headers: { 'api-key': l.edgeKey },
          body: { edgeId: l.edgeId, text: `Cleanup on aisle ${++n}, thank you.`, actor: 'Manager' },
        });
      }),
    );
    loops.push(
      every(30_000, async () => {
        await d.call('R2', 'POST', `/webhooks/incoming/messaging/${l.edgeId}`, {
          form: {
            AccountSid: w.accountSid,
            Body: `Price check on register ${++n}`,
            MessageSid: `SM${Date.now()}${n}`,
            From: '+15145550100',
            To: '+15145550199',
          },
          signWith: w.authToken,
        });
      }),
    );
    // Lockers: orders through their lifecycle.
    const free = new Set(l.cabinetIds);
    const keyOf = (cabinetId: number) => l.cabinetIds.indexOf(cabinetId) + 1;
    const report = (cabinetId: number, state: 'open' | 'closed') =>
      d.call('L7', 'POST', '/api/lockers/cabinet/status', {
        headers: { 'api-key': l.lockerKey },
        body: { cabinets: [{ key: keyOf(cabinetId), front_status: state }], locker_info: { firmware: 'soak-1.0', ip: '10.0.0.9' } },
      });
    ctx.lockers.set(l.lockerId, () => undefined);
    loops.push(
      every(3_000, async () => {
        const cabinetId = [...free][0];
        if (cabinetId === undefined) return;
        free.delete(cabinetId);
        track(
          (async () => {
            const created = await d.call('L2', 'POST', `/api/lockers/orders?${q}`, {
              body: { rearload: false, locker_id: l.lockerId, cabinet_id: cabinetId, order_id: ++n, organization_id: 1, location_id: l.id },
              expect: [201],
            });
            if (!created.ok) return;
            const id = created.json.id as number;
            let code = created.json.open_code as string;
            await report(cabinetId, 'open');
            await sleep(between(500, 2_000));
            await report(cabinetId, 'closed'); // ready
            const r = Math.random();
            if (r < 0.15) {
              // Nobody comes: the deadline passes (90 s) with reminders, then staff cancel it.
              await sleep(100_000);
              await d.call('L8', 'POST', `/api/lockers/orders/${id}/cancel?${q}`, { body: {} });
            } else if (r < 0.25) {
              await d.call('L8', 'POST', `/api/lockers/orders/${id}/cancel?${q}`, { body: {} });
            } else if (r < 0.6) {
              await sleep(between(5_000, 40_000));
              const renewed = await d.call('L9', 'POST', `/api/lockers/orders/${id}/open_code?${q}`, { body: {} });
              if (renewed.ok) code = renewed.json.open_code as string;
              await d.call('L5', 'POST', `/api/lockers/cabinets/customers/${code}?${q}`, { body: { command: 'here' } });
              await report(cabinetId, 'open');
              await sleep(between(1_000, 3_000));
              await report(cabinetId, 'closed');
              await d.call('L6', 'PUT', `/api/lockers/orders/customer/${code}?${q}`, { body: {} });
            } else {
              await sleep(between(5_000, 40_000));
              await d.call('L3', 'PUT', `/api/lockers/cabinets/${cabinetId}?${q}`, { body: { command: 'open', reason: 'staff hands the order over' } });
              await sleep(between(1_000, 3_000));
              await report(cabinetId, 'closed');
              await d.call('L4', 'PUT', `/api/lockers/orders/cabinets/${cabinetId}?${q}`, { body: {} });
            }
          })().finally(() => free.add(cabinetId)),
        );
      }),
    );
    loops.push(every(5_000, () => d.call('L1', 'GET', `/api/lockers/locations/${l.id}?${q}`)));
    loops.push(every(10_000, () => d.call('C7', 'GET', `/api/callforhelp/requests?location_id=${l.id}&state=all&limit=50`, { headers: bearer })));
    // Reports and the rest of what managers read.
    loops.push(
      every(30_000, async () => {
        const from = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
        const to = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
        await d.call('P1', 'GET', `/api/reports/cfh?location_id=${l.id}&from=${from}&to=${to}`, { headers: bearer });
        await d.call('P2', 'GET', `/api/reports/cfh/requests.csv?location_id=${l.id}&from=${from}&to=${to}`, { headers: bearer });
        await d.call('P3', 'GET', `/api/reports/lockers?location_id=${l.id}&from=${from}&to=${to}`, { headers: bearer });
        await d.call('D1', 'GET', `/api/devices?location_id=${l.id}`, { headers: bearer });
        await d.call(
          'R3',
          'GET',
          `/api/radio/transcripts?edge_id=${l.edgeId}&from=${new Date(Date.now() - 600_000).toISOString()}&to=${new Date().toISOString()}`,
          { headers: bearer },
        );
      }),
    );
  }
  loops.push(
    every(30_000, async () => {
      const list = await d.call('W1', 'GET', `/api/webhooks/${pick([1, 2])}/deliveries`, { headers: bearer });
      // W1 answers a list, newest first.
      const items = (Array.isArray(list.json) ? list.json : []) as { id: string; state: string }[];
      const failed = items.find((x) => x.state !== 'pending');
      if (failed !== undefined && Math.random() < 0.3)
        await d.call('W2', 'POST', `/api/webhooks/deliveries/${failed.id}/redeliver`, { headers: bearer, expect: [202] });
    }),
  );
  for (let i = 0; i < d.instances; i++) loops.push(every(15_000, () => d.call('metrics', 'GET', '/metrics')));
  await Promise.all(loops);
  await Promise.all([...pending]);
}
