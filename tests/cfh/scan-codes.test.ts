// Scan codes (contract sections 18 and 19): provisioning makes one for each option, button and
// display with require_scan that has none, shows it once (never in the audit log) and keeps only its
// digest; applying the file again makes none; rotating makes a new one (the old one stops working)
// with an audit entry that shows "[secret]".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { provisioningActor } from '../../src/audit/record.ts';
import { newScanCode, normalizeScanCode, rotateScanCode, scanCodeDigest } from '../../src/cfh/scan-codes.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, makeWorld, testApp } from '../support/world.ts';

test('a scan code is 130 random bits in 26 characters, read whatever its case, spaces and dashes', () => {
  const code = newScanCode();
  assert.match(code, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}-[0-9A-HJKMNP-TV-Z]{6}$/);
  assert.notEqual(newScanCode(), code);
  assert.equal(normalizeScanCode(` ${code.toLowerCase().replace(/-/g, ' ')} `), code.replace(/-/g, ''));
  assert.equal(scanCodeDigest(code.toLowerCase()), scanCodeDigest(code));
  assert.equal(normalizeScanCode('not a code'), null);
  assert.equal(normalizeScanCode(`${code}X`), null);
});

test('provisioning makes a code for each require_scan object without one, shown once; rotating replaces it, audited as a secret', async (t) => {
  const ctx = await testApp({ t });
  const w = await makeWorld(ctx.db, ctx.clock);
  const buttonId = freshId();
  const displayId = freshId();
  const file = {
    cfh_options: [
      {
        id: w.optionId,
        organization_id: w.organizationId,
        location_id: w.locationId,
        text_en: 'Help',
        text_fr: 'Aide',
        prompt_en: 'p',
        prompt_fr: 'p',
        require_scan: true,
      },
    ],
    call_buttons: [
      { id: buttonId, location_id: w.locationId, name: 'Paint', device_key: `AA:00:00:00:${buttonId % 100}:01`, option_id: w.optionId, require_scan: true },
    ],
    cfh_displays: [
      { id: displayId, location_id: w.locationId, name: 'Door', key: `display-key-${freshId()}-0123456789`, option_ids: [w.optionId], require_scan: false },
    ],
  };
  const first = await applyProvisioning(ctx.db, ctx.clock, file, { source: 'store.json' });
  assert.deepEqual(first.scan_codes?.map((c) => `${c.kind} ${c.id}`).sort(), [`call_button ${buttonId}`, `cfh_option ${w.optionId}`].sort());
  const again = await applyProvisioning(ctx.db, ctx.clock, file, { source: 'store.json' });
  assert.equal(again.scan_codes, undefined, 'made once');
  const audit = await ctx.db.query<{ changes: unknown }>("SELECT changes FROM audit_entries WHERE action = 'provisioning.applied'");
  const codes = (first.scan_codes ?? []).map((c) => c.scan_code);
  for (const entry of audit) for (const code of codes) assert.ok(!JSON.stringify(entry.changes).includes(code), 'no code in the audit log');

  const old = first.scan_codes?.find((c) => c.kind === 'call_button')?.scan_code as string;
  const rotated = await rotateScanCode(ctx, provisioningActor('npm run scan-code'), 'call_button', buttonId);
  assert.ok(rotated !== null && rotated !== old);
  const [row] = await ctx.db.query<{ scan_code_hash: string }>('SELECT scan_code_hash FROM call_buttons WHERE id = $1', [buttonId]);
  assert.equal(row?.scan_code_hash, scanCodeDigest(rotated));
  const [entry] = await ctx.db.query<{ action: string; changes: unknown }>(
    "SELECT action, changes FROM audit_entries WHERE action = 'call_button.scan_code_rotated' ORDER BY id DESC LIMIT 1",
  );
  assert.deepEqual(entry?.changes, { scan_code: { from: '[secret]', to: '[secret]' } });
  assert.equal(await rotateScanCode(ctx, provisioningActor(null), 'display', 2_000_000_000), null, 'no such display');
});
