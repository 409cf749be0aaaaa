// `npm run provision -- --export FILE`: the setup made through administration, written as a
// provisioning file without secrets; applied to an empty database and exported again, the same file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { exportProvisioning } from '../../src/provisioning/export.ts';
import { freshDb, testApp, testDatabaseUrl } from '../support/world.ts';
import { bearer, call, ifMatch, mac, setupWorld } from './support.ts';

const root = path.join(import.meta.dirname, '../..');

test('export, apply to an empty database, export again: the same file, and no secret in it', async (t) => {
  const ctx = await testApp({ t });
  const w = await setupWorld(ctx.db, ctx.clock);
  const token = bearer(w.adminToken);
  const post = async (url: string, body: Record<string, unknown>) => {
    const res = await call(ctx.app, token, 'POST', url, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Record<string, unknown> & { id: number };
  };
  const store = await post('/api/admin/locations', { name: 'Exported', time_zone: 'Europe/Paris', locker_pickup_hours: 48.5, language: 'fr' });
  const option = await post('/api/admin/cfh_options', { text_en: 'Help', text_fr: 'Aide', prompt_en: 'Coming', prompt_fr: 'Arrive' });
  const override = await post('/api/admin/cfh_options', {
    location_id: store.id,
    text_en: 'Keys',
    text_fr: 'Clés',
    prompt_en: '',
    prompt_fr: '',
    staff_action: 'acknowledge',
  });
  const locker = await post('/api/admin/lockers', {
    location_id: store.id,
    name: 'Lockers',
    cabinets: [
      { key: 1, size: 'large' },
      { key: 2, tag: 'cold' },
    ],
  });
  await post('/api/admin/cfh_outcomes', { location_id: store.id, key: 'sale', text_en: 'Sale', text_fr: 'Vente' });
  const button = await post('/api/admin/call_buttons', {
    location_id: store.id,
    name: 'Paint',
    device_key: mac(),
    option_id: option.id,
    chat_channel_id: '19:x',
  });
  assert.equal((await call(ctx.app, token, 'PATCH', `/api/admin/call_buttons/${button.id}`, { enabled: false }, ifMatch(1))).statusCode, 200);
  const display = await post('/api/admin/displays', { location_id: store.id, name: 'Door', option_ids: [override.id, option.id], allow_custom_text: true });

  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-export-')), 'setup.json');
  const cli = spawnSync(process.execPath, [path.join(root, 'src/cli/provision.ts'), '--export', file], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: await testDatabaseUrl() },
  });
  assert.equal(cli.status, 0, cli.stderr);
  const text = fs.readFileSync(file, 'utf8');
  const exported = JSON.parse(text);
  assert.deepEqual(exported, JSON.parse(JSON.stringify(await exportProvisioning(ctx.db))));
  for (const secret of [locker.api_key, display.key, w.lockerKey, w.adminToken]) assert.ok(!text.includes(String(secret)), 'a secret in the export');

  assert.deepEqual(
    exported.lockers.find((l: { id: number }) => l.id === locker.id),
    {
      id: locker.id,
      location_id: store.id,
      name: 'Lockers',
      rear_loading_available: false,
      timer: 30,
      version: 2,
      cabinets: [
        { id: (locker.cabinets as { id: number }[])[0]?.id, key: 1, size: 'large', thermal_mode: 'ambient' },
        { id: (locker.cabinets as { id: number }[])[1]?.id, key: 2, size: 'medium', thermal_mode: 'ambient', tag: 'cold' },
      ],
    },
  );
  assert.deepEqual(exported.call_buttons.find((b: { id: number }) => b.id === button.id)?.enabled, false);
  assert.deepEqual(exported.cfh_displays.find((d: { id: number }) => d.id === display.id)?.option_ids, [override.id, option.id]);

  const empty = await freshDb({ t });
  await migrate(empty);
  const summary = await applyProvisioning(empty, ctx.clock, exported);
  assert.equal(summary.made_keys?.length, exported.lockers.length + exported.cfh_displays.length, 'new keys for the lockers and displays');
  assert.deepEqual(JSON.parse(JSON.stringify(await exportProvisioning(empty))), exported);
});
