// testWebhook's send: one test event, formatted as the endpoint's deliveries are (formats.ts: signed,
// or a Slack or Teams card) and POSTed now by the deliveries' own POST (post.ts) over the same
// guarded connections (the address rules and WEBHOOK_ALLOW_PRIVATE), and what came back. Nothing is
// stored: a test is not an event, and has no delivery or retries.
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { WebhookFormat } from '../provisioning/schema.ts';
import type { WebhookConnections } from './connections.ts';
import { outgoing } from './formats.ts';
import { postWebhook } from './post.ts';
import { isDelivered } from './rules.ts';

export interface TestTarget {
  url: string;
  format: WebhookFormat;
  secret: string;
  organizationId: number;
  locationId: number | null;
  language: string | null;
}

export interface TestOutcome {
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  body_excerpt: string | null;
  error: string | null;
}

export interface TestSendDeps {
  clock: Clock;
  connections: WebhookConnections;
  publicBaseUrl: string;
  timeoutMs: number;
}

/** The bytes of the receiver's answer a test shows. */
export const EXCERPT_BYTES = 500;

export async function sendTestEvent(deps: TestSendDeps, target: TestTarget): Promise<TestOutcome> {
  const at = deps.clock.now();
  const createdAt = at.toISOString().replace(/Z$/, '000Z');
  const requestedAt = new Date(at.getTime() - 90_000).toISOString().replace(/Z$/, '000Z');
  // A Call for Help event of status "test": receivers that parse events read it as they read the others.
  const { body, headers } = outgoing(
    {
      format: target.format,
      secret: target.secret,
      store_number: null,
      language: target.language,
      location_name: null,
      request: { created_at: requestedAt, custom_text: null, option_text_en: 'Test', option_text_fr: 'Test' },
      event: {
        uuid: crypto.randomUUID(),
        type: 'callforhelp',
        status: 'test',
        created_at: createdAt,
        location_id: target.locationId,
        internal_id: null,
        organization_id: target.organizationId,
        message: 'A test event from storeops',
        details: { type: 'api', name: 'Test', option_text: 'Test', option_prompt: 'Test', message_id: 'test', claimed_by: null, request_from: null },
      },
    },
    at,
    deps.publicBaseUrl,
  );
  const started = performance.now();
  const result = await postWebhook(
    { url: target.url, body, headers },
    { timeoutMs: deps.timeoutMs, connections: deps.connections, bodyCap: 64 * 1024, excerptBytes: EXCERPT_BYTES },
  );
  return {
    delivered: isDelivered(result),
    status_code: result.statusCode,
    duration_ms: Math.round(performance.now() - started),
    body_excerpt: result.bodyExcerpt ?? null,
    error: result.error,
  };
}
