// The Call for Help part of a provisioning file (version 2): a location's CFH settings, outcomes,
// call buttons and displays. Same rules as apply.ts: insert if new, update only what differs (upsert.ts).
import type { Queryable } from '../db/db.ts';
import { sha256hex } from '../http/secrets.ts';
import { entry, organizationOfLocation, ProvisioningError, type ProvisioningSummary } from './apply.ts';
import type { ProvisioningFile } from './schema.ts';
import { upsertByKey } from './upsert.ts';

type Location = NonNullable<ProvisioningFile['locations']>[number];

export async function applyCfhLocationSettings(q: Queryable, l: Location, now: Date): Promise<void> {
  const values = [
    l.cfh_escalation_seconds ?? null,
    l.cfh_reminder_seconds ?? null,
    l.cfh_reminder_claimed_seconds ?? null,
    l.cfh_reminder_cap_seconds ?? null,
    l.cfh_auto_complete_seconds ?? null,
    l.staff_name_format ?? null,
    l.call_button_cooldown_seconds ?? null,
    l.language ?? null,
  ];
  await q.query(
    `UPDATE locations SET cfh_escalation_seconds = $2, cfh_reminder_seconds = $3, cfh_reminder_claimed_seconds = $4,
       cfh_reminder_cap_seconds = $5, cfh_auto_complete_seconds = $6, staff_name_format = $7, call_button_cooldown_seconds = $8,
       language = $9, updated_at = $10
     WHERE id = $1 AND (cfh_escalation_seconds, cfh_reminder_seconds, cfh_reminder_claimed_seconds, cfh_reminder_cap_seconds,
       cfh_auto_complete_seconds, staff_name_format, call_button_cooldown_seconds, language)
       IS DISTINCT FROM ($2::int, $3::int, $4::int, $5::int, $6::int, $7::text, $8::int, $9::text)`,
    [l.id, ...values, now],
  );
}

/** An option the location may use: of its organization, for every location or for this one. */
async function checkOption(q: Queryable, where: string, optionId: number, organizationId: number, locationId: number): Promise<void> {
  const rows = await q.query('SELECT 1 FROM cfh_options WHERE id = $1 AND organization_id = $2 AND (location_id IS NULL OR location_id = $3)', [
    optionId,
    organizationId,
    locationId,
  ]);
  if (rows.length === 0) throw new ProvisioningError(`${where}: option ${optionId} is not an option of location ${locationId}`);
}

export async function applyCfhDevices(q: Queryable, file: ProvisioningFile, summary: ProvisioningSummary, now: Date): Promise<void> {
  if (file.cfh_outcomes !== undefined) summary.cfh_outcomes = 0;
  if (file.call_buttons !== undefined) summary.call_buttons = 0;
  if (file.cfh_displays !== undefined) summary.cfh_displays = 0;
  for (const [i, o] of (file.cfh_outcomes ?? []).entries()) {
    const where = `cfh_outcomes[${i}]`;
    await entry(where, async () => {
      await organizationOfLocation(q, where, o.location_id);
      await upsertByKey(
        q,
        'cfh_outcomes',
        ['id', o.id],
        {
          location_id: { value: o.location_id },
          key: { value: o.key },
          text_en: { value: o.text_en },
          text_fr: { value: o.text_fr },
        },
        now,
      );
    });
    summary.cfh_outcomes = (summary.cfh_outcomes ?? 0) + 1;
  }
  for (const [i, b] of (file.call_buttons ?? []).entries()) {
    const where = `call_buttons[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, b.location_id);
      await checkOption(q, `${where}.option_id`, b.option_id, organizationId, b.location_id);
      await upsertByKey(
        q,
        'call_buttons',
        ['id', b.id],
        {
          organization_id: { value: organizationId },
          location_id: { value: b.location_id },
          option_id: { value: b.option_id },
          name: { value: b.name },
          device_key: { value: b.device_key },
          chat_channel_id: { value: b.chat_channel_id ?? null },
          require_scan: { value: b.require_scan ?? false },
        },
        now,
      );
    });
    summary.call_buttons = (summary.call_buttons ?? 0) + 1;
  }
  for (const [i, d] of (file.cfh_displays ?? []).entries()) {
    const where = `cfh_displays[${i}]`;
    await entry(where, async () => {
      const organizationId = await organizationOfLocation(q, where, d.location_id);
      for (const [j, optionId] of d.option_ids.entries()) await checkOption(q, `${where}.option_ids[${j}]`, optionId, organizationId, d.location_id);
      await upsertByKey(
        q,
        'cfh_displays',
        ['id', d.id],
        {
          organization_id: { value: organizationId },
          location_id: { value: d.location_id },
          name: { value: d.name },
          key_hash: { value: sha256hex(d.key) },
          option_ids: { value: d.option_ids, cast: 'int[]' },
          allow_custom_text: { value: d.allow_custom_text ?? false },
          chat_channel_id: { value: d.chat_channel_id ?? null },
          require_scan: { value: d.require_scan ?? false },
        },
        now,
      );
    });
    summary.cfh_displays = (summary.cfh_displays ?? 0) + 1;
  }
}
