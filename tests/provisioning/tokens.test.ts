import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { insertAccount, insertToken } from '../../src/people/admin/service-account-store.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { describeSummary } from '../../src/provisioning/errors.ts';
import { keyBits } from '../../src/provisioning/strength.ts';
import { freshId, testDb } from '../support/world.ts';

const clock = new ManualClock();
const secret = () => crypto.randomBytes(24).toString('base64url');

function tokenOf(org: number, name: string) {
  return { name, organization_id: org, scopes: ['cfh' as const], token: secret() };
}

async function revokedAt(org: number): Promise<Record<string, boolean>> {
  const db = await testDb();
  const rows = await db.query<{ name: string; revoked: boolean }>('SELECT name, revoked_at IS NOT NULL AS revoked FROM api_tokens WHERE organization_id = $1', [
    org,
  ]);
  return Object.fromEntries(rows.map((r) => [r.name, r.revoked]));
}

test('a token the file no longer lists is revoked at the next apply, and the apply says so', async () => {
  const db = await testDb();
  const org = freshId();
  const [kept, removed] = [tokenOf(org, `kept-${org}`), tokenOf(org, `removed-${org}`)];
  const organizations = [{ id: org, name: `Org ${org}` }];
  await applyProvisioning(db, clock, { organizations, api_tokens: [kept, removed] });
  // A token administration made in the same organization is not the file's.
  const account = await insertAccount(db, org, `admin-made-${org}`, clock.now());
  assert.ok(account !== undefined);
  await insertToken(
    db,
    { accountId: account.id, organizationId: org, storedName: `admin-${org}`, scopes: ['cfh'], locationIds: null, expiresAt: null, hash: sha256hex(secret()) },
    clock.now(),
  );

  const summary = await applyProvisioning(db, clock, { organizations, api_tokens: [kept] });
  assert.equal(summary.api_tokens_revoked, 1);
  assert.match(describeSummary(summary), /api_tokens_revoked 1/);
  assert.deepEqual(await revokedAt(org), { [kept.name]: false, [removed.name]: true, [`admin-${org}`]: false });

  const again = await applyProvisioning(db, clock, { organizations, api_tokens: [kept] });
  assert.equal(again.api_tokens_revoked, undefined, 'a revoked token is revoked once');
});

test('a partial file (its organization not listed) and a file of another organization revoke nothing', async () => {
  const db = await testDb();
  const [org, other] = [freshId(), freshId()];
  const first = tokenOf(org, `first-${org}`);
  await applyProvisioning(db, clock, { organizations: [{ id: org, name: `Org ${org}` }], api_tokens: [first] });
  await applyProvisioning(db, clock, { organizations: [{ id: other, name: `Org ${other}` }], api_tokens: [tokenOf(other, `other-${other}`)] });
  const partial = await applyProvisioning(db, clock, { api_tokens: [tokenOf(org, `second-${org}`)] });
  assert.equal(partial.api_tokens_revoked, undefined);
  assert.deepEqual(await revokedAt(org), { [first.name]: false, [`second-${org}`]: false });
});

test('a key given in a file with less than about 128 bits is refused with its field named, never its value', async () => {
  const db = await testDb();
  const org = freshId();
  const weak = [
    { name: `human-${org}`, organization_id: org, scopes: ['cfh' as const], token: 'Summer2026Summer' },
    { name: `repeat-${org}`, organization_id: org, scopes: ['cfh' as const], token: 'abcd1234'.repeat(8) },
    { name: `run-${org}`, organization_id: org, scopes: ['cfh' as const], token: 'x'.repeat(64) },
  ];
  for (const [i, t] of weak.entries()) {
    await assert.rejects(applyProvisioning(db, clock, { organizations: [{ id: org, name: 'Org' }], api_tokens: [t] }), (err: Error) => {
      assert.match(err.message, /^api_tokens\[0\]\.token: too easy to guess/, `token ${i}`);
      assert.ok(!err.message.includes(t.token), 'the key itself is not repeated');
      return true;
    });
  }
  await assert.rejects(
    applyProvisioning(db, clock, { radio_edges: [{ edge_id: `e-${org}`, location_id: 1, name: 'E', device_key: 'edge-key-0000001' }] }),
    /radio_edges\[0\]\.device_key: too easy to guess/,
  );
  // Random 128-bit keys (22 URL-safe characters) pass, also one that by chance has no digit.
  for (let i = 0; i < 500; i++) {
    const key = crypto.randomBytes(16).toString('base64url');
    assert.ok(keyBits(key) >= 128, key);
  }
  assert.ok(keyBits('hGkqTzRwPbNcXvLmJdYfSa') >= 128, 'letters of both cases, no digit');
  const strong = await applyProvisioning(db, clock, { organizations: [{ id: org, name: 'Org' }], api_tokens: [tokenOf(org, `strong-${org}`)] });
  assert.equal(strong.api_tokens, 1);
});
