// TypeBox for section 18's CFH options, outcomes, call buttons and displays: built from the
// provisioning file's entries (provisioning/schema.ts), so a field is validated alike in both.
import { Type, type TSchema } from 'typebox';
import { objectSchemas } from '../../admin/schemas.ts';
import { CallButtonEntry, CfhOptionEntry, CfhOutcomeEntry, DisplayEntry } from '../../provisioning/schema.ts';

export const ScanCode = Type.String({ description: 'the scan code (section 19): shown in this answer only; print it as a QR code of exactly this text' });

/** A view with the scan code its create may show once. */
export const withScanCode = (View: TSchema & { properties: Record<string, TSchema> }, title: string) =>
  Type.Object({ ...View.properties, scan_code: Type.Optional(ScanCode) }, { title });

const optionSchemas = objectSchemas('CfhOption', CfhOptionEntry.properties, {
  optional: ['organization_id', 'location_id'],
  fixed: ['organization_id'],
  description: 'a Call for Help option: of the whole organization (location_id null) or of one location',
});
export const OptionSchemas = { ...optionSchemas, Created: withScanCode(optionSchemas.View, 'CreatedCfhOption') };

export const OutcomeSchemas = objectSchemas('CfhOutcome', CfhOutcomeEntry.properties, {
  description: "an outcome staff pick when completing a location's request",
});

const buttonSchemas = objectSchemas('CallButton', CallButtonEntry.properties, {
  description: "a physical call button, known by its MAC address (device_key) as its hub sends it; its press (B1) asks for its option's help",
});
export const ButtonSchemas = { ...buttonSchemas, Created: withScanCode(buttonSchemas.View, 'CreatedCallButton') };

const displaySchemas = objectSchemas('CfhDisplay', DisplayEntry.properties, {
  hidden: ['key'],
  fixed: ['key'],
  description: 'a display (a printed QR code) whose customer page asks for one of its options; its key is never shown again after it is made or rotated',
});

const Key = {
  key: Type.String({ description: "the display's key: shown in this answer only (its page is PUBLIC_BASE_URL/help/{key})" }),
  url: Type.String({ description: "the display's customer page, which its QR code holds" }),
};

export const DisplaySchemas = {
  ...displaySchemas,
  Created: Type.Object({ ...displaySchemas.View.properties, ...Key, scan_code: Type.Optional(ScanCode) }, { title: 'CreatedCfhDisplay' }),
  Rotated: Type.Object({ ...displaySchemas.View.properties, ...Key }, { title: 'RotatedCfhDisplay' }),
};

export const QrQuery = Type.Object({
  display_key: Type.String({ minLength: 1, maxLength: 128, description: 'the key shown when the display was made or its key rotated' }),
});
