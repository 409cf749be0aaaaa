// What the tests of Call for Help share: the calls a kiosk and a chat integration make, over HTTP.
import assert from 'node:assert/strict';
import type { App } from '../../src/app.ts';
import type { Db } from '../../src/db/db.ts';
import { listEvents } from '../../src/cfh/store.ts';

export const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
export const SQL_SECONDS = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

export interface Employee {
  channel_id: string;
  claimed_by: string;
  claimed_by_user_id: string;
  request_from?: 'provider_a' | 'provider_b' | 'provider_c' | 'web_interface';
}

export const ann: Employee = { channel_id: 'C-floor', claimed_by: 'Ann', claimed_by_user_id: 'U-ann' };
export const bob: Employee = { channel_id: 'C-floor', claimed_by: 'Bob', claimed_by_user_id: 'U-bob', request_from: 'provider_b' };

/** A client of C0-C5 holding one bearer token. */
export function cfhClient(app: App, token: string | null) {
  const headers = token === null ? {} : { authorization: `Bearer ${token}` };
  const post = (path: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/api/callforhelp/${path}`, headers, payload });
  return {
    create: (payload: Record<string, unknown>) => post('requests', payload),
    claim: (message_id: string, who: Employee = ann) => post('claim', { message_id, ...who }),
    onTheWay: (message_id: string, who: Employee = ann) => post('on_the_way', { message_id, ...who }),
    complete: (message_id: string, customer_status = 'not_interested', who: Employee = ann) =>
      post('complete', { message_id, customer_status, ...who }),
    cancel: (message_id: string) => post('cancel', { message_id }),
    track: (message_id: string) =>
      app.inject({ method: 'GET', url: `/api/callforhelp/v1/tracking?message_id=${encodeURIComponent(message_id)}`, headers }),
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
