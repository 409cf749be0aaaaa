// What the tests of Call for Help share: the calls a kiosk and a chat integration make, over HTTP.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { listEvents } from '../../src/cfh/store.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import type { ProvisioningFile } from '../../src/provisioning/schema.ts';
import { freshId, makeWorld, type TestContext, type World } from '../support/world.ts';

export const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
export const SQL_SECONDS = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

export interface Employee {
  channel_id: string;
  claimed_by: string;
  claimed_by_user_id: string;
  request_from?: 'provider_a' | 'provider_b' | 'provider_c' | 'web_interface' | 'microsoft' | 'ringcentral' | 'bluefletch' | 'radio' | 'call_button';
}

export const ann: Employee = { channel_id: 'C-floor', claimed_by: 'Ann', claimed_by_user_id: 'U-ann' };
export const bob: Employee = { channel_id: 'C-floor', claimed_by: 'Bob', claimed_by_user_id: 'U-bob', request_from: 'provider_b' };

/** A client of C0-C5 holding one bearer token. */
export function cfhClient(app: App, token: string | null) {
  const headers = token === null ? {} : { authorization: `Bearer ${token}` };
  const post = (path: string, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/api/callforhelp/${path}`, headers, payload });
  return {
    create: (payload: Record<string, unknown>) => post('requests', payload),
    claim: (message_id: string, who: Employee = ann) => post('claim', { message_id, ...who }),
    onTheWay: (message_id: string, who: Employee = ann) => post('on_the_way', { message_id, ...who }),
    complete: (message_id: string, customer_status = 'not_interested', who: Employee = ann) => post('complete', { message_id, customer_status, ...who }),
    cancel: (message_id: string) => post('cancel', { message_id }),
    track: (message_id: string) => app.inject({ method: 'GET', url: `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(message_id)}`, headers }),
    post,
  };
}
export type CfhClient = ReturnType<typeof cfhClient>;

/** C0 that must succeed; returns the record. */
export async function createRequest(client: CfhClient, payload: Record<string, unknown>): Promise<Record<string, unknown> & { message_id: string }> {
  const res = await client.create(payload);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** The `success` of a C1-C3 answer that must be 200. */
export function success(res: { statusCode: number; body: string; json(): unknown }): boolean {
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { success: boolean }).success;
}

export async function eventKinds(db: Db, organizationId: number, messageId: string): Promise<string[]> {
  return (await listEvents(db, organizationId, messageId)).map((e) => e.kind);
}

/** ManualClock time in the two wire formats. */
export const iso = (d: Date) => `${d.toISOString().slice(0, 23)}000Z`;
export const seconds = (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)}`;

export interface CfhSettings {
  cfh_timeout_seconds?: number | null;
  cfh_escalation_seconds?: number | null;
  cfh_reminder_seconds?: number | null;
  cfh_reminder_claimed_seconds?: number | null;
  cfh_reminder_cap_seconds?: number | null;
  cfh_auto_complete_seconds?: number | null;
  staff_name_format?: 'full' | 'first' | 'generic' | null;
  call_button_cooldown_seconds?: number | null;
  language?: 'en' | 'fr' | null;
}

export interface CfhWorld extends World {
  /** A token with the buttons scope (a call button hub's). */
  hubToken: string;
  buttonId: number;
  /** The button's MAC address as provisioned (upper case). */
  deviceKey: string;
  displayId: number;
  displayKey: string;
  /** A second option of the location, on the display with the first. */
  secondOptionId: number;
}

/**
 * makeWorld's organization with the Call for Help of version 2: the location's settings, a call
 * button and a display (both on the world's option; the display also on a second one), outcomes
 * when given, a hub token.
 */
export async function makeCfhWorld(
  db: Db,
  clock: Clock,
  opts: { settings?: CfhSettings; outcomes?: string[]; staffAction?: string; allowCustomText?: boolean; displayName?: string; optionText?: string } = {},
): Promise<CfhWorld> {
  const settings = { cfh_escalation_seconds: 0, ...opts.settings };
  const w = await makeWorld(db, clock, { cfhTimeoutSeconds: settings.cfh_timeout_seconds ?? undefined });
  const buttonId = freshId();
  const displayId = freshId();
  const secondOptionId = freshId();
  const mac = crypto.randomBytes(6).toString('hex').toUpperCase().match(/../g)?.join(':') ?? '';
  const displayKey = crypto.randomBytes(16).toString('base64url');
  const hubToken = crypto.randomBytes(18).toString('base64url');
  const file: ProvisioningFile = {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: `Store ${w.locationId}`, ...settings }],
    cfh_options: [
      {
        id: w.optionId,
        organization_id: w.organizationId,
        location_id: w.locationId,
        text_en: opts.optionText ?? 'Help',
        text_fr: 'Aide',
        prompt_en: 'Someone is coming',
        prompt_fr: "Quelqu'un arrive",
        staff_action: (opts.staffAction ?? 'claim_and_on_the_way') as 'none',
      },
      {
        id: secondOptionId,
        organization_id: w.organizationId,
        location_id: w.locationId,
        text_en: 'Paint',
        text_fr: 'Peinture',
        prompt_en: 'Paint counter',
        prompt_fr: 'Comptoir peinture',
      },
    ],
    call_buttons: [{ id: buttonId, location_id: w.locationId, name: 'Paint counter', device_key: mac, option_id: w.optionId }],
    cfh_displays: [
      {
        id: displayId,
        location_id: w.locationId,
        name: opts.displayName ?? 'Entrance QR',
        key: displayKey,
        option_ids: [w.optionId, secondOptionId],
        allow_custom_text: opts.allowCustomText ?? true,
      },
    ],
    cfh_outcomes: (opts.outcomes ?? []).map((key) => ({ id: freshId(), location_id: w.locationId, key, text_en: key, text_fr: key })),
    api_tokens: [{ name: `hub-${w.organizationId}`, organization_id: w.organizationId, scopes: ['buttons'], token: hubToken }],
  };
  await applyProvisioning(db, clock, file);
  return { ...w, hubToken, buttonId, deviceKey: mac, displayId, displayKey, secondOptionId };
}

/** B1 as a hub sends it (any scheme word). */
export function press(app: App, hubToken: string, body: Record<string, unknown>, scheme = 'Hub') {
  return app.inject({ method: 'POST', url: '/api/callbutton/press', headers: { authorization: `${scheme} ${hubToken}` }, payload: body });
}

/** Another location of the world's organization (for tokens limited to some locations). */
export async function addLocation(db: Db, clock: Clock, w: World): Promise<number> {
  const id = freshId();
  await applyProvisioning(db, clock, { locations: [{ id, organization_id: w.organizationId, name: `Store ${id}` }] });
  return id;
}

/** A world of its own, and a kiosk's client with its token. */
export async function worldWithClient(ctx: TestContext, opts: Parameters<typeof makeWorld>[2] = {}): Promise<{ w: World; client: CfhClient }> {
  const w = await makeWorld(ctx.db, ctx.clock, opts);
  return { w, client: cfhClient(ctx.app, w.token) };
}
