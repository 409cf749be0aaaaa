// The Call for Help part of a provisioning file (version 2): outcomes, call buttons and displays.
// Same rules as apply.ts: insert if new, update only what differs (upsert.ts), with the rules
// administration shares (entries.ts).
import { entry, organizationOfLocation, type ProvisioningSummary } from './apply.ts';
import { buttonColumns, checkDeviceOptions, checkOption, displayColumns, outcomeColumns } from './entries.ts';
import { exists, madeKey, OWNED, tookOver, type ApplyContext } from './owners.ts';
import type { ProvisioningFile } from './schema.ts';
import { upsertByKey } from './upsert.ts';

export async function applyCfhDevices(ctx: ApplyContext, file: ProvisioningFile, summary: ProvisioningSummary): Promise<void> {
  const { q, now } = ctx;
  if (file.cfh_outcomes !== undefined) summary.cfh_outcomes = 0;
  if (file.call_buttons !== undefined) summary.call_buttons = 0;
  if (file.cfh_displays !== undefined) summary.cfh_displays = 0;
  for (const [i, o] of (file.cfh_outcomes ?? []).entries()) {
    const where = `cfh_outcomes[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, o.location_id);
      const done = await upsertByKey(q, 'cfh_outcomes', ['id', o.id], outcomeColumns(o), now, OWNED);
      await tookOver(ctx, done, { type: 'cfh_outcome', id: o.id, name: o.key, organizationId, locationId: o.location_id });
    });
    summary.cfh_outcomes = (summary.cfh_outcomes ?? 0) + 1;
  }
  for (const [i, b] of (file.call_buttons ?? []).entries()) {
    const where = `call_buttons[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, b.location_id);
      await checkOption(q, 'option_id', b.option_id, organizationId, b.location_id);
      const done = await upsertByKey(q, 'call_buttons', ['id', b.id], buttonColumns(b, organizationId), now, OWNED);
      await tookOver(ctx, done, { type: 'call_button', id: b.id, name: b.name, organizationId, locationId: b.location_id });
    });
    summary.call_buttons = (summary.call_buttons ?? 0) + 1;
  }
  for (const [i, d] of (file.cfh_displays ?? []).entries()) {
    const where = `cfh_displays[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, d.location_id);
      await checkDeviceOptions(q, organizationId, d);
      const key = d.key ?? ((await exists(q, 'cfh_displays', d.id)) ? null : madeKey(ctx, 'cfh_display', d.id));
      const done = await upsertByKey(q, 'cfh_displays', ['id', d.id], displayColumns(d, organizationId, key), now, OWNED);
      await tookOver(ctx, done, { type: 'cfh_display', id: d.id, name: d.name, organizationId, locationId: d.location_id });
    });
    summary.cfh_displays = (summary.cfh_displays ?? 0) + 1;
  }
}
