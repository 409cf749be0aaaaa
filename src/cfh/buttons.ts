// Call buttons (contract section 9): B1, a press or a voltage report from a button's hub, and B2,
// a long press that completes, closes or cancels the button's own request. The hub's token names
// the organization; the button is found by its MAC address in any case. Every call records the
// button's last-seen time (device health) and, when given, its voltage.
import { tokenOf, type ApiTokenActor } from '../access/actor.ts';
import type { Db, Tx } from '../db/db.ts';
import { recordSightings } from '../devices/health-store.ts';
import { AppError, invalid } from '../http/errors.ts';
import { insertNewRequest, type CfhDeps } from './requests.ts';
import { eventLead, type Staff } from './rules.ts';
import type { RequestRow } from './rows.ts';
import { acceptPress, lockButton, recordVoltage, type ButtonRow } from './button-store.ts';
import * as store from './store.ts';

export interface ButtonDeps extends CfhDeps {
  db: Pick<Db, 'query' | 'run' | 'statement' | 'tx'>;
  /** DEVICE_OFFLINE_SECONDS: how long a sighting keeps a device online. */
  offlineSeconds: number;
}

export interface PressInput {
  deviceKey: string;
  voltage: number | null;
  button: number | null;
}

/** B1's answers, as deployed hubs parse them (text/plain). */
export type PressResult = { kind: 'created'; messageId: string } | { kind: 'voltage' } | { kind: 'zero' };

export const PRESS_TEXT = {
  voltage: 'Voltage updated successfully',
  zero: 'Button value is 0, no action taken',
} as const;

const buttonNotFound = () => new AppError(404, 'call_button_not_found', 'no call button of this organization has this device_key');

/** The button, seen now: last-seen (device health) and the voltage it reported, in the call's transaction. */
async function sightButton(q: Tx, deps: ButtonDeps, hub: ApiTokenActor, deviceKey: string, voltage: number | null, now: Date): Promise<ButtonRow> {
  const button = await lockButton(q, hub, deviceKey);
  if (button === null) throw buttonNotFound();
  await recordSightings(q, [{ kind: 'call_button', deviceId: String(button.id), seenAt: now }], deps.offlineSeconds, now);
  if (voltage !== null) await recordVoltage(q, button, voltage, now);
  return button;
}

/**
 * B1. A press (button absent or not 0) creates a request with the button's option, unless it
 * comes within the location's call_button_cooldown_seconds of the button's last accepted press:
 * then 429 with the seconds left, and nothing is created (the sighting and voltage still count).
 * The button's row lock makes concurrent presses queue: of 20 at once, one creates a request.
 */
export async function pressButton(deps: ButtonDeps, hub: ApiTokenActor, input: PressInput): Promise<PressResult> {
  const now = deps.clock.now();
  const outcome = await deps.db.tx(async (q) => {
    const button = await sightButton(q, deps, hub, input.deviceKey, input.voltage, now);
    if (input.button === 0) return input.voltage === null ? { kind: 'zero' as const } : { kind: 'voltage' as const };
    const press = await acceptPress(q, button, now);
    if (!press.accepted) return { kind: 'cooldown' as const, secondsLeft: press.secondsLeft };
    const row = await insertNewRequest(q, deps, hub, {
      locationId: button.location_id,
      optionId: button.option_id,
      deviceId: null,
      displayId: null,
      callbuttonId: button.id,
      chatChannelId: button.chat_channel_id,
      source: 'call_button',
    });
    return { kind: 'created' as const, messageId: row.message_id };
  });
  if (outcome.kind === 'cooldown') {
    // Thrown after the commit: the button was seen, and its voltage counts, even when the press does not.
    throw new AppError(429, 'call_button_cooldown', `Please wait ${outcome.secondsLeft} seconds before sending another request!`, {
      headers: { 'retry-after': String(outcome.secondsLeft) },
    });
  }
  return outcome;
}

export const UPDATE_TYPES = ['completed', 'close', 'customer_canceled'] as const;
export type UpdateType = (typeof UPDATE_TYPES)[number];

/**
 * B2: the long press. The request must be this button's and still open, else 404
 * cfh_request_not_found. `completed` needs a reason (its completion_reason); `close` completes
 * with reason `closed`; `customer_canceled` cancels.
 */
export async function updateFromButton(
  deps: ButtonDeps,
  hub: ApiTokenActor,
  messageId: string,
  input: { deviceKey: string; updateType: UpdateType; reason: string | null },
): Promise<RequestRow> {
  if (input.updateType === 'completed' && (input.reason === null || input.reason.trim() === '')) throw invalid('reason', 'is required for completed');
  const now = deps.clock.now();
  const notFound = () => new AppError(404, 'cfh_request_not_found', 'no open request of this call button has this message_id');
  const { button, changed } = await deps.db.tx(async (q) => {
    const b = await sightButton(q, deps, hub, input.deviceKey, null, now);
    const staff: Staff = { name: b.name, userId: `call_button:${b.id}`, channelId: b.device_key, from: 'call_button' };
    if (input.updateType === 'customer_canceled') {
      const row = await store.cancel(q, hub, messageId, tokenOf(hub), eventLead({ status: 'cancelled' }), now, {
        onlyButton: b.id,
        requestFrom: 'call_button',
      });
      return { button: b, changed: row !== null };
    }
    const reason = input.updateType === 'close' ? 'closed' : (input.reason as string);
    const result = await store.complete(q, hub, messageId, staff, reason, tokenOf(hub), eventLead({ status: 'completed', by: b.name }), now, {
      checkOutcome: false,
      onlyButton: b.id,
    });
    return { button: b, changed: result.completed };
  });
  if (!changed) throw notFound();
  const row = await store.findRecord(deps.db, hub, messageId);
  if (row === null || row.callbutton_id !== button.id) throw notFound();
  return row;
}
