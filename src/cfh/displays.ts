// Displays, the digital call buttons (contract section 9): a QR code leads a customer's phone to
// GET /help/{display_key}; choosing an option (or typing a short text) is C9, which creates a
// request with source `display`. The display key is the credential: an unknown one is 404. Its
// limits (display-rules.ts): a cooldown per browser, a bound per address, a limit per display,
// and a browser's open request answered again rather than a second one.
import { deviceActor } from '../access/actor.ts';
import type { Queryable } from '../db/db.ts';
import { AppError, invalid } from '../http/errors.ts';
import { clientBound } from '../http/client-address.ts';
import { sha256hex } from '../http/secrets.ts';
import { decideDisplayPress, DISPLAY_REQUESTS_PER_MINUTE } from './display-rules.ts';
import {
  displayOptions,
  displayPressFigures,
  findDisplay,
  lockDisplay,
  openRequestOfBrowser,
  recordDisplayPress,
  type DisplayOption,
  type DisplayRow,
} from './display-store.ts';
import { isProfane } from './profanity.ts';
import { staffNameFor } from './rules.ts';
import { insertNewRequest, type CfhDeps } from './requests.ts';
import type { RequestRow } from './rows.ts';

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
  /** The id the customer's page keeps (validated by the schema), or null from a client without one. */
  browserId: string | null;
  /** The client's address (request.ip): it bounds how many browsers one network brings. */
  address: string;
}

/** C9's answer: a new request (201), or the browser's request that is still open (200). */
export interface DisplayRequestOutcome {
  row: RequestRow;
  created: boolean;
}

/**
 * C9: a request from the display, with one of its options or (when it allows it) a free text of
 * at most 200 characters that the profanity filter does not flag. A text alone takes the
 * display's first option. A browser whose request from this display is still open gets that
 * request, whatever it chose this time. Otherwise, within the location's
 * call_button_cooldown_seconds of this browser's last request at this display, past 5 browsers of
 * its address in the window, or past 10 requests of the display in a minute: 429, nothing created.
 * A client without a browser id is its address (IPv6: its /64), as before version 3.
 */
export async function createDisplayRequest(deps: CfhDeps, key: string, input: DisplayRequestInput): Promise<DisplayRequestOutcome> {
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
  const address = clientBound(input.address);
  // Only a digest is kept: the id itself answers the browser's open request, so it stays on the phone.
  const browserDigest = input.browserId === null ? null : sha256hex(input.browserId);
  const press = { client: browserDigest === null ? address : `browser:${browserDigest}`, address };
  const outcome = await deps.db.tx(async (q) => {
    const now = deps.clock.now();
    await lockDisplay(q, display.id);
    if (browserDigest !== null) {
      const open = await openRequestOfBrowser(q, display.id, browserDigest);
      // A customer sees the claimer's name only as the location shows it to customers (as in C5).
      if (open !== null) return { row: { ...open, claimed_by: staffNameFor(open.claimed_by, display.staff_name_format) }, created: false } as const;
    }
    const decision = decideDisplayPress(
      now,
      display.cooldown_seconds,
      await displayPressFigures(q, { id: display.id, cooldownSeconds: display.cooldown_seconds }, press, now),
    );
    if (!decision.accepted) return decision;
    await recordDisplayPress(q, display.id, press, now);
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
        browserDigest,
      },
    );
    return { row, created: true } as const;
  });
  if ('row' in outcome) return outcome;
  const headers = { 'retry-after': String(outcome.secondsLeft) };
  if (outcome.code === 'display_busy') {
    throw new AppError(
      429,
      'display_busy',
      `This display takes at most ${DISPLAY_REQUESTS_PER_MINUTE} requests a minute; please wait ${outcome.secondsLeft} seconds.`,
      { headers },
    );
  }
  throw new AppError(429, 'display_cooldown', `Please wait ${outcome.secondsLeft} seconds before sending another request!`, { headers });
}
