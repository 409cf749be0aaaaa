import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { applyProvisioning, parseProvisioning, ProvisioningError } from '../../src/provisioning/apply.ts';
import { freshId, testDb } from '../support/world.ts';

const clock = new ManualClock();

function fileFor(org: number, loc: number, locker: number, cabinet: number) {
  return {
    organizations: [{ id: org, name: 'Acme' }],
    locations: [{ id: loc, organization_id: org, name: 'Store', cfh_timeout_seconds: 120 }],
    lockers: [
      {
        id: locker,
        location_id: loc,
        name: 'Front',
        version: 2,
        rear_loading_available: true,
        timer: 30,
        api_key: `locker-key-${locker}-abcdefgh`,
        cabinets: [{ id: cabinet, key: 1, size: 'medium', thermal_mode: 'ambient' }],
      },
    ],
    api_tokens: [{ name: `bot-${org}`, organization_id: org, scopes: ['cfh'], token: `token-${org}-abcdefghijkl` }],
  };
}

test('a file is applied, and applying it again changes nothing', async () => {
  const db = await testDb();
  const [org, loc, locker, cabinet] = [freshId(), freshId(), freshId(), freshId()];
  const file = fileFor(org, loc, locker, cabinet);
  const summary = await applyProvisioning(db, clock, file);
  assert.deepEqual(summary, { organizations: 1, locations: 1, lockers: 1, cabinets: 1, cfh_options: 0, radio_edges: 0, messaging_accounts: 0, api_tokens: 1 });
  const snapshot = async () => ({
    lockers: await db.query('SELECT * FROM lockers WHERE id = $1', [locker]),
    cabinets: await db.query('SELECT * FROM cabinets WHERE id = $1', [cabinet]),
    tokens: await db.query('SELECT * FROM api_tokens WHERE organization_id = $1', [org]),
  });
  const first = await snapshot();
  clock.advance(1000);
  await applyProvisioning(db, clock, file);
  assert.deepEqual(await snapshot(), first, 'updated_at did not move either');
  assert.equal(first.lockers[0]?.organization_id, org, 'a locker takes its organization from its location');
  assert.equal(first.tokens[0]?.token_hash, sha256hex(`token-${org}-abcdefghijkl`));
  assert.ok(!JSON.stringify(first.tokens).includes(`token-${org}-abcdefghijkl`), 'the token itself is not stored');
});

test('a changed entry is updated by id, and runtime cabinet state is kept', async () => {
  const db = await testDb();
  const [org, loc, locker, cabinet] = [freshId(), freshId(), freshId(), freshId()];
  const file = fileFor(org, loc, locker, cabinet);
  await applyProvisioning(db, clock, file);
  await db.query("UPDATE cabinets SET size = 'large', enabled = false WHERE id = $1", [cabinet]);
  file.lockers[0]!.name = 'Renamed';
  await applyProvisioning(db, clock, file);
  const [row] = await db.query<{ name: string }>('SELECT name FROM lockers WHERE id = $1', [locker]);
  assert.equal(row?.name, 'Renamed');
  const [cab] = await db.query<{ size: string; enabled: boolean }>('SELECT size, enabled FROM cabinets WHERE id = $1', [cabinet]);
  assert.deepEqual(cab, { size: 'large', enabled: false });
});

test('a broken file is refused naming the bad entry, and nothing of it is applied', async () => {
  const db = await testDb();
  const [org, loc, locker, cabinet] = [freshId(), freshId(), freshId(), freshId()];
  const file = fileFor(org, loc, locker, cabinet) as Record<string, unknown>;
  (file.lockers as Record<string, unknown>[])[0]!.cabinets = 'none';
  await assert.rejects(applyProvisioning(db, clock, file), (err: Error) => {
    assert.ok(err instanceof ProvisioningError);
    assert.match(err.message, /lockers\[0\]\.cabinets: must be an array/);
    return true;
  });
  assert.deepEqual(await db.query('SELECT id FROM organizations WHERE id = $1', [org]), []);
});

test('an entry the database refuses rolls the whole file back and is named', async () => {
  const db = await testDb();
  const [org, loc, locker, cabinet] = [freshId(), freshId(), freshId(), freshId()];
  const file = fileFor(org, loc, locker, cabinet);
  file.lockers[0]!.location_id = freshId(); // no such location
  await assert.rejects(applyProvisioning(db, clock, file), /lockers\[0\]\.location_id: location \d+ does not exist/);
  assert.deepEqual(await db.query('SELECT id FROM organizations WHERE id = $1', [org]), []);
  const dup = fileFor(org, loc, freshId(), cabinet);
  dup.lockers[0]!.cabinets.push({ id: freshId(), key: 1, size: 'small', thermal_mode: 'ambient' });
  // The rule administration shares names the cabinet's key before the database would refuse it.
  await assert.rejects(applyProvisioning(db, clock, dup), /lockers\[0\]\.cabinets\[1\]\.key: cabinet key 1 is twice in this locker/);
  assert.deepEqual(await db.query('SELECT id FROM locations WHERE id = $1', [loc]), []);
});

test('the example file is valid', () => {
  const example: unknown = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../examples/provision.json'), 'utf8'));
  assert.doesNotThrow(() => parseProvisioning(example));
});
