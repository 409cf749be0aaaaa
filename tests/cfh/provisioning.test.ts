// Provisioning the Call for Help of version 2: location settings, outcomes, call buttons and
// displays, applied idempotently; an option of another organization is refused and nothing changes.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyProvisioning, parseProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

test('settings, outcomes, a call button and a display are applied, and applying again changes nothing', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const [buttonId, displayId, outcomeId] = [freshId(), freshId(), freshId()];
  const file = {
    locations: [
      {
        id: w.locationId,
        organization_id: w.organizationId,
        name: 'Store',
        cfh_escalation_seconds: 30,
        cfh_reminder_seconds: 0,
        staff_name_format: 'generic' as const,
        call_button_cooldown_seconds: 10,
        language: 'fr' as const,
      },
    ],
    cfh_outcomes: [{ id: outcomeId, location_id: w.locationId, key: 'sale', text_en: 'Sale', text_fr: 'Vente' }],
    call_buttons: [{ id: buttonId, location_id: w.locationId, name: 'Paint', device_key: 'aa:bb:cc:dd:ee:ff', option_id: w.optionId }],
    cfh_displays: [{ id: displayId, location_id: w.locationId, name: 'QR', key: 'a-display-key-of-22-chars-or-more', option_ids: [w.optionId] }],
  };
  const summary = await applyProvisioning(ctx.db, ctx.clock, file);
  assert.deepEqual([summary.cfh_outcomes, summary.call_buttons, summary.cfh_displays], [1, 1, 1]);
  const [loc] = await ctx.db.query('SELECT cfh_escalation_seconds, staff_name_format, language, updated_at FROM locations WHERE id = $1', [w.locationId]);
  assert.deepEqual({ ...loc, updated_at: undefined }, { cfh_escalation_seconds: 30, staff_name_format: 'generic', language: 'fr', updated_at: undefined });
  ctx.clock.advance(60_000);
  await applyProvisioning(ctx.db, ctx.clock, file);
  const [again] = await ctx.db.query<{ updated_at: string }>('SELECT updated_at FROM locations WHERE id = $1', [w.locationId]);
  assert.equal(again?.updated_at, (loc as { updated_at: string }).updated_at, 'an unchanged location is not written');
  const [display] = await ctx.db.query<{ key_hash: string }>('SELECT key_hash FROM cfh_displays WHERE id = $1', [displayId]);
  assert.notEqual(display?.key_hash, 'a-display-key-of-22-chars-or-more', 'the key is kept only as its hash');
});

test("a call button on another organization's option is refused, and nothing of the file is applied", async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const other = await makeWorld(ctx.db, ctx.clock);
  const buttonId = freshId();
  await assert.rejects(
    applyProvisioning(ctx.db, ctx.clock, {
      cfh_outcomes: [{ id: freshId(), location_id: w.locationId, key: 'x', text_en: 'x', text_fr: 'x' }],
      call_buttons: [{ id: buttonId, location_id: w.locationId, name: 'B', device_key: '11:22:33:44:55:66', option_id: other.optionId }],
    }),
    /call_buttons\[0\]\.option_id/,
  );
  assert.deepEqual(await ctx.db.query('SELECT 1 FROM call_buttons WHERE id = $1', [buttonId]), []);
  assert.deepEqual(await ctx.db.query('SELECT 1 FROM cfh_outcomes WHERE location_id = $1', [w.locationId]), []);
});

test('bad values are refused by the schema: a display of 5 options, a short key, an unknown staff action', () => {
  const bad = [
    { cfh_displays: [{ id: 1, location_id: 1, name: 'D', key: 'a-display-key-of-22-chars-or-more', option_ids: [1, 2, 3, 4, 5] }] },
    { cfh_displays: [{ id: 1, location_id: 1, name: 'D', key: 'short', option_ids: [1] }] },
    { cfh_options: [{ id: 1, organization_id: 1, text_en: 'a', text_fr: 'a', prompt_en: '', prompt_fr: '', staff_action: 'dance' }] },
    { locations: [{ id: 1, organization_id: 1, name: 'L', staff_name_format: 'nick' }] },
  ];
  for (const file of bad) assert.throws(() => parseProvisioning(file), JSON.stringify(file));
});
