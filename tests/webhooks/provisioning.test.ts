// Webhook endpoints from the provisioning file: a bad URL or a missing secret is refused with a
// message naming the entry, and a refused file changes nothing; a good one is applied idempotently.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning, ProvisioningError } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, testDb } from '../support/world.ts';

const db = await testDb();
const clock = new ManualClock();

async function refused(entry: Record<string, unknown>, message: RegExp): Promise<void> {
  const before = await db.query('SELECT count(*)::int AS n FROM webhook_endpoints');
  await assert.rejects(applyProvisioning(db, clock, { webhooks: [entry] }), (err: Error) => {
    assert.ok(err instanceof ProvisioningError, String(err));
    assert.match(err.message, message);
    return true;
  });
  assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM webhook_endpoints'), before, 'nothing was applied');
}

test('a bad URL, a missing or empty secret, an unknown event type or a foreign location is refused, naming the entry', async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  const good = { id: freshId(), organization_id: w.organizationId, url: 'https://example.com/hook', secret: 'a'.repeat(32) };
  for (const url of ['ftp://example.com/hook', 'not a url', 'javascript:alert(1)', 'https://user:pw@example.com/']) {
    await refused({ ...good, url }, /^webhooks\[0\]\.url: must /);
  }
  await refused({ ...good, url: '' }, /^webhooks\[0\]\.url: /);
  await refused({ ...good, secret: undefined }, /^webhooks\[0\]\.secret: /);
  await refused({ ...good, secret: '' }, /^webhooks\[0\]\.secret: /);
  await refused({ ...good, events: ['callforhelp', 'weather'] }, /^webhooks\[0\]\.events\[1\]: /);
  await refused({ ...good, location_id: other.locationId }, /^webhooks\[0\]\.location_id: location \d+ is not of organization \d+/);
  await refused({ ...good, location_id: 2_000_000_000 }, /^webhooks\[0\]\.location_id: location 2000000000 does not exist/);
});

test('an endpoint is applied idempotently, keeps its secret for signing, and defaults to every event type', async () => {
  const w = await makeWorld(db, clock);
  const id = freshId();
  const file = {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, store_number: '0042' }],
    webhooks: [{ id, organization_id: w.organizationId, location_id: w.locationId, url: 'https://example.com/hook', secret: 's'.repeat(40) }],
    api_tokens: [{ name: `hooks-${id}`, organization_id: w.organizationId, scopes: ['webhooks' as const], token: `token-${id}-abcdefghijklmnopq` }],
  };
  const summary = await applyProvisioning(db, clock, file);
  assert.equal(summary.webhooks, 1);
  const read = () => db.query('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
  const [first] = await read();
  assert.deepEqual(
    { ...first, created_at: null, updated_at: null },
    {
      id,
      organization_id: w.organizationId,
      location_id: w.locationId,
      url: 'https://example.com/hook',
      secret: 's'.repeat(40),
      events: ['callforhelp', 'locker', 'radio', 'device'],
      format: 'signed',
      enabled: true,
      version: 1,
      managed_by: 'file',
      created_at: null,
      updated_at: null,
    },
  );
  clock.advance(1_000);
  await applyProvisioning(db, clock, file);
  assert.deepEqual(await read(), [first], 'applied again: unchanged, updated_at included');
  const [location] = await db.query<{ store_number: string }>('SELECT store_number FROM locations WHERE id = $1', [w.locationId]);
  assert.equal(location?.store_number, '0042');

  await applyProvisioning(db, clock, { webhooks: [{ ...file.webhooks[0], url: 'http://example.org/other', events: ['locker'] }] });
  const [changed] = await db.query<{ url: string; events: string[] }>('SELECT url, events FROM webhook_endpoints WHERE id = $1', [id]);
  assert.deepEqual({ url: changed?.url, events: changed?.events }, { url: 'http://example.org/other', events: ['locker'] });
});
