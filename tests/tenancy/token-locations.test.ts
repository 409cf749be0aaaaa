// A token limited to some locations (`location_ids`, contract section 2): a location of its own
// organization outside the list is treated as another organization's (not found), while the
// token's own locations answer as before. Provisioning refuses a list naming another
// organization's location.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyProvisioning, ProvisioningError } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, provisionToken, testApp, type TestContext, type World } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** A second location of the world's organization, with a webhook endpoint of its own. */
async function secondLocation(w: World): Promise<{ locationId: number; endpointId: number }> {
  const locationId = freshId();
  const endpointId = freshId();
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: locationId, organization_id: w.organizationId, name: `Store ${locationId}` }],
    webhooks: [{ id: endpointId, organization_id: w.organizationId, location_id: locationId, url: 'https://example.com/hook', secret: 'a-receiver-secret' }],
  });
  return { locationId, endpointId };
}

const get = (url: string, token: string) => ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

test('a token limited to one location reads its reports, devices and webhooks, and finds nothing of the other location', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const own = await secondLocation(w);
  const other = await secondLocation(w);
  const limited = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['reports', 'devices', 'webhooks'], { locationIds: [own.locationId] });
  const whole = await provisionToken(ctx.db, ctx.clock, w.organizationId, ['reports', 'devices', 'webhooks']);
  const urls = (l: { locationId: number; endpointId: number }) => [
    `/api/reports/cfh?location_id=${l.locationId}&from=2026-01-01&to=2026-01-31`,
    `/api/reports/cfh/requests.csv?location_id=${l.locationId}&from=2026-01-01&to=2026-01-31`,
    `/api/reports/lockers?location_id=${l.locationId}&from=2026-01-01&to=2026-01-31`,
    `/api/devices?location_id=${l.locationId}`,
    `/api/webhooks/${l.endpointId}/deliveries`,
  ];
  for (const url of urls(own)) {
    const res = await get(url, limited);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  }
  for (const url of urls(other)) {
    const refused = await get(url, limited);
    assert.equal(refused.statusCode, 404, `${url}: ${refused.body}`);
    assert.equal(typeof refused.json<{ message: string }>().message, 'string');
    const allowed = await get(url, whole);
    assert.equal(allowed.statusCode, 200, `the unlimited token reads ${url}: ${allowed.body}`);
  }
});

test("provisioning refuses a token limited to another organization's location, and stores nothing of it", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const stranger = await makeWorld(ctx.db, ctx.clock);
  const name = `limited-${freshId()}`;
  await assert.rejects(
    applyProvisioning(ctx.db, ctx.clock, {
      api_tokens: [{ name, organization_id: w.organizationId, scopes: ['reports'], token: 'a-token-of-sixteen-chars', location_ids: [stranger.locationId] }],
    }),
    (err: unknown) => err instanceof ProvisioningError && /api_tokens\[0\]\.location_ids\[0\]/.test(err.message),
  );
  assert.equal((await ctx.db.query('SELECT 1 FROM api_tokens WHERE name = $1', [name])).length, 0);
});
