// The Call for Help setup objects as section 18 administers them: CFH options (of the whole
// organization or one location), outcomes, call buttons and displays. Each maps to the
// provisioning file's entry and its rules (provisioning/entries.ts); objects.ts does the rest.
import { sql } from '../../db/sql.ts';
import { scanCodeDigest } from '../scan-codes.ts';
import type { ObjectKind } from '../../admin/objects.ts';
import type { ObjectRow, ObjectSource } from '../../admin/object-store.ts';
import {
  buttonColumns,
  checkDeviceOptions,
  checkOption,
  displayColumns,
  optionColumns,
  outcomeColumns,
  type CallButton,
  type Columns,
  type CfhOption,
  type CfhOutcome,
  type Display,
} from '../../provisioning/entries.ts';

/** An entry with the scan code made for it by its create (section 19): kept as its digest only. */
type Scanned<E> = E & { scan_code?: string };

const scanCodeColumn = (e: { scan_code?: string }): Columns => (e.scan_code === undefined ? {} : { scan_code_hash: { value: scanCodeDigest(e.scan_code) } });

const COMMON = sql`x.id, x.enabled, x.version, x.managed_by, x.created_at, x.updated_at`;

const source = (table: string, select: ReturnType<typeof sql>, organization = sql`x.organization_id`): ObjectSource => ({
  table,
  select,
  organization,
  location: sql`x.location_id`,
  versionColumn: 'version',
  sequence: `${table}_admin_id`,
});

export interface OptionRow extends ObjectRow, Omit<CfhOption, 'id' | 'enabled' | 'organization_id' | 'location_id'> {}

export const optionKind: ObjectKind<OptionRow, Scanned<CfhOption>> = {
  type: 'cfh_option',
  what: 'CFH option',
  source: source(
    'cfh_options',
    sql`SELECT ${COMMON}, x.organization_id, x.location_id, x.text_en, x.text_fr, x.prompt_en, x.prompt_fr, x.staff_action, x.require_scan FROM cfh_options x`,
  ),
  entryOf: (r) => ({
    id: r.id,
    organization_id: r.organization_id,
    location_id: r.location_id,
    text_en: r.text_en,
    text_fr: r.text_fr,
    prompt_en: r.prompt_en,
    prompt_fr: r.prompt_fr,
    staff_action: r.staff_action,
    require_scan: r.require_scan ?? false,
    enabled: r.enabled,
  }),
  shown: ({ id: _id, scan_code: _code, ...rest }) => rest,
  nameOf: (o) => o.text_en,
  check: async () => {},
  columns: (o, organizationId) => ({ ...optionColumns({ ...o, organization_id: organizationId }), ...scanCodeColumn(o) }),
  deletes: (id) => [sql`DELETE FROM cfh_options WHERE id = ${id}`],
};

export interface OutcomeRow extends ObjectRow, Omit<CfhOutcome, 'id' | 'enabled' | 'location_id'> {}

export const outcomeKind: ObjectKind<OutcomeRow, CfhOutcome> = {
  type: 'cfh_outcome',
  what: 'CFH outcome',
  source: source(
    'cfh_outcomes',
    sql`SELECT ${COMMON}, l.organization_id, x.location_id, x.key, x.text_en, x.text_fr FROM cfh_outcomes x JOIN locations l ON l.id = x.location_id`,
    sql`l.organization_id`,
  ),
  entryOf: (r) => ({ id: r.id, location_id: r.location_id as number, key: r.key, text_en: r.text_en, text_fr: r.text_fr, enabled: r.enabled }),
  shown: ({ id: _id, ...rest }) => rest,
  nameOf: (o) => o.key,
  check: async () => {},
  columns: (o) => outcomeColumns(o),
  unique: { cfh_outcomes_location_id_key_key: 'key' },
};

export interface ButtonRow extends ObjectRow, Omit<CallButton, 'id' | 'enabled' | 'location_id'> {}

export const buttonKind: ObjectKind<ButtonRow, Scanned<CallButton>> = {
  type: 'call_button',
  what: 'call button',
  source: source(
    'call_buttons',
    sql`SELECT ${COMMON}, x.organization_id, x.location_id, x.name, x.device_key, x.option_id, x.chat_channel_id, x.require_scan FROM call_buttons x`,
  ),
  entryOf: (r) => ({
    id: r.id,
    location_id: r.location_id as number,
    name: r.name,
    device_key: r.device_key,
    option_id: r.option_id,
    chat_channel_id: r.chat_channel_id ?? null,
    require_scan: r.require_scan ?? false,
    enabled: r.enabled,
  }),
  shown: ({ id: _id, scan_code: _code, ...rest }) => rest,
  nameOf: (b) => b.name,
  check: (tx, b, organizationId) => checkOption(tx, 'option_id', b.option_id, organizationId, b.location_id),
  columns: (b, organizationId) => ({ ...buttonColumns(b, organizationId), ...scanCodeColumn(b) }),
  unique: { call_buttons_device_key: 'device_key' },
};

export interface DisplayRow extends ObjectRow, Omit<Display, 'id' | 'enabled' | 'location_id' | 'key'> {}

/** A display's key is kept only as its digest: columns() keeps it; create and rotate set it. */
export const displayKind: ObjectKind<DisplayRow, Scanned<Display>> = {
  type: 'cfh_display',
  what: 'display',
  source: source(
    'cfh_displays',
    sql`SELECT ${COMMON}, x.organization_id, x.location_id, x.name, x.option_ids, x.allow_custom_text, x.chat_channel_id, x.require_scan FROM cfh_displays x`,
  ),
  entryOf: (r) => ({
    id: r.id,
    location_id: r.location_id as number,
    name: r.name,
    option_ids: r.option_ids,
    allow_custom_text: r.allow_custom_text ?? false,
    chat_channel_id: r.chat_channel_id ?? null,
    require_scan: r.require_scan ?? false,
    enabled: r.enabled,
  }),
  shown: ({ id: _id, key: _key, scan_code: _code, ...rest }) => rest,
  nameOf: (d) => d.name,
  check: (tx, d, organizationId) => checkDeviceOptions(tx, organizationId, d),
  columns: (d, organizationId) => ({ ...displayColumns(d, organizationId, d.key ?? null), ...scanCodeColumn(d) }),
  deletes: (id) => [sql`DELETE FROM cfh_display_presses WHERE display_id = ${id}`, sql`DELETE FROM cfh_displays WHERE id = ${id}`],
};
