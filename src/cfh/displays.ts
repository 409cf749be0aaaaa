// Displays, the digital call buttons (contract section 9): a QR code leads a customer's phone to
// GET /help/{display_key}; choosing an option (or typing a short text) is C9, which creates a
// request with source `display`. The display key is the credential: an unknown one is 404.
import { deviceActor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { AppError, invalid } from '../http/errors.ts';
import { sha256hex } from '../http/secrets.ts';
import { isProfane } from './profanity.ts';
import { insertNewRequest, type CfhDeps } from './requests.ts';
import type { RequestRow } from './rows.ts';
import { acceptDisplayPress, displayOptions, findDisplay, type DisplayOption, type DisplayRow } from './button-store.ts';

/** The longest free text a customer may send. */
export const CUSTOM_TEXT_MAX = 200;

const displayNotFound = () => new AppError(404, 'display_not_found', 'no display has this key');

/** A display key is URL-safe text of 22 to 128 characters (provisioning refuses others). */
const looksLikeKey = (key: string) => /^[A-Za-z0-9_-]{22,128}$/.test(key);

/** The display and its options, for its page. */
export async function displayPage(deps: { db: Queryable }, key: string): Promise<{ display: DisplayRow; options: DisplayOption[] }> {
  if (!looksLikeKey(key)) throw displayNotFound();
  const display = await findDisplay(deps.db, sha256hex(key));
  if (display === null) throw displayNotFound();
  return { display, options: await displayOptions(deps.db, display) };
}

export interface DisplayRequestInput {
  optionId: number | null;
  customText: string | null;
  /** The client's address: one request per display and address per cooldown. */
  client: string;
}

/**
 * C9: a request from the display, with one of its options or (when it allows it) a free text of
 * at most 200 characters that the profanity filter does not flag. A text alone takes the
 * display's first option. Within the location's call_button_cooldown_seconds of this address's
 * last request at this display: 429, nothing created.
 */
export async function createDisplayRequest(deps: CfhDeps, key: string, input: DisplayRequestInput): Promise<RequestRow> {
  const { display, options } = await displayPage(deps, key);
  const text = input.customText?.trim() ?? '';
  if (input.optionId === null && text === '') throw invalid('option_id', 'choose an option or send a custom_text');
  if (input.optionId !== null && !options.some((o) => o.id === input.optionId)) throw invalid('option_id', 'is not an option of this display');
  if (text !== '') {
    if (!display.allow_custom_text) throw invalid('custom_text', 'this display takes no free text');
    if (text.length > CUSTOM_TEXT_MAX) throw invalid('custom_text', `must be at most ${CUSTOM_TEXT_MAX} characters`);
    if (isProfane(text)) throw invalid('custom_text', 'was refused by the profanity filter');
  }
  const optionId = input.optionId ?? options[0]?.id;
  if (optionId === undefined) throw invalid('option_id', 'this display has no option');
  const outcome = await deps.db.tx(async (q) => {
    const press = await acceptDisplayPress(q, display.id, input.client, display.cooldown_seconds, deps.clock.now());
    if (!press.accepted) return { row: null, secondsLeft: press.secondsLeft };
    const row = await insertNewRequest(
      q,
      deps,
      deviceActor('display', display.id, { organizationId: display.organization_id, locationId: display.location_id }),
      {
        locationId: display.location_id,
        optionId,
        deviceId: null,
        displayId: display.id,
        callbuttonId: null,
        chatChannelId: display.chat_channel_id,
        source: 'display',
        customText: text === '' ? null : text,
      },
    );
    return { row, secondsLeft: 0 };
  });
  if (outcome.row === null) {
    throw new AppError(429, 'display_cooldown', `Please wait ${outcome.secondsLeft} seconds before sending another request!`, {
      headers: { 'retry-after': String(outcome.secondsLeft) },
    });
  }
  return outcome.row;
}
