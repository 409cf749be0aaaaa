// Seeds a running service through its own API: open orders and open CFH requests.
import type { BenchWorld } from './world.ts';

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

export async function seed(url: string, world: BenchWorld, secret: string, orders: number, requests: number) {
  const cabinets = world.lockers.flatMap((k) => k.cabinets.map((c) => ({ lockerId: k.id, locationId: k.locationId, cabinetId: c.id })));
  // Spread the open orders over the chain; the rest of the cabinets are free for the order cycle.
  const step = Math.max(1, Math.floor(cabinets.length / orders));
  const occupied = new Set<number>();
  for (let i = 0; i < cabinets.length && occupied.size < orders; i += step) occupied.add(i);
  let orderId = 1;
  await pool([...occupied], 16, async (i) => {
    const c = cabinets[i] as (typeof cabinets)[number];
    const res = await fetch(`${url}/api/lockers/orders?secret_token=${secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        rearload: false,
        locker_id: c.lockerId,
        cabinet_id: c.cabinetId,
        order_id: orderId++,
        organization_id: world.organizationId,
        location_id: c.locationId,
      }),
    });
    if (res.status !== 201) throw new Error(`seeding an order failed: ${res.status} ${await res.text()}`);
  });
  const messageIds: string[] = [];
  await pool(
    Array.from({ length: requests }, (_, i) => i),
    16,
    async (i) => {
      const locationId = world.locations[i % world.locations.length] as number;
      const res = await fetch(`${url}/api/callforhelp/requests`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${world.token}` },
        body: JSON.stringify({ location_id: locationId, option_id: world.optionByLocation.get(locationId) }),
      });
      if (res.status !== 201) throw new Error(`seeding a CFH request failed: ${res.status} ${await res.text()}`);
      messageIds.push(((await res.json()) as { message_id: string }).message_id);
    },
  );
  const freeCabinets = cabinets.filter((_, i) => !occupied.has(i)).sort(() => Math.random() - 0.5);
  return { freeCabinets, messageIds };
}
