// The service's values the console's pages switch on, from their one TypeScript source, served as
// the ES module /console/assets/values.js (made when the app starts; the pages import it like their
// own modules), so that no page keeps a copy by hand.
import { ROLES } from '../access/actor.ts';
import { DEFAULT_STAFF_ACTION, STAFF_ACTIONS } from '../cfh/schemas.ts';
import { EVENT_TYPES } from '../events/log.ts';
import { THERMAL_MODES } from '../lockers/schemas.ts';
import { ADMIN_TOKEN_SCOPES } from '../people/admin/schemas.ts';
import { CFH_ANNOUNCEABLE, EDGE_VOICE_HANDLERS, WEBHOOK_FORMATS } from '../provisioning/schema.ts';
import { CFH_STEPS, STEPS_BY_STAFF_ACTION } from './actions.ts';
import { webFile, type WebFile } from '../http/web-files.ts';

/** Its path under /console/assets/ (no file of web/ has it). */
export const VALUES_MODULE = 'values.js';

export function valuesModule(): WebFile {
  const values: Record<string, unknown> = {
    STAFF_ACTIONS,
    DEFAULT_STAFF_ACTION,
    CFH_STEPS,
    STEPS_BY_STAFF_ACTION,
    // The administration pages' choices (section 18), as the API validates them.
    ROLES,
    ADMIN_TOKEN_SCOPES,
    THERMAL_MODES,
    EVENT_TYPES,
    CFH_ANNOUNCEABLE,
    VOICE_HANDLERS: EDGE_VOICE_HANDLERS,
    WEBHOOK_FORMATS,
  };
  const text =
    '// Made by the service (src/console/values.ts) from its own lists.\n' +
    Object.entries(values)
      .map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};\n`)
      .join('');
  return webFile(Buffer.from(text), 'text/javascript; charset=utf-8');
}
