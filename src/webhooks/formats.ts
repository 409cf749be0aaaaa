// What one delivery sends, by the endpoint's format: the formatter of each kind, one pipeline
// (claim, POST, retries, breaker, attempt log) for all of them. A signed endpoint gets the event as
// section 11 says, signed; a Slack or Teams endpoint a message for its channel (section 20), not
// signed (the URL is the secret) and with no secret in it.
import type { EventRow } from '../events/log.ts';
import { eventPayload } from '../events/payload.ts';
import type { WebhookFormat } from '../provisioning/schema.ts';
import { cardFacts, type RequestFacts } from './cards/facts.ts';
import { slackMessage } from './cards/slack.ts';
import { teamsMessage } from './cards/teams.ts';
import { signedHeaders } from './rules.ts';

export type DeliveredEvent = Pick<
  EventRow,
  'uuid' | 'type' | 'status' | 'created_at' | 'details' | 'location_id' | 'internal_id' | 'organization_id' | 'message'
>;

/** One delivery to format: its endpoint's format and secret, its event, and what a card adds. */
export interface Formattable {
  format: WebhookFormat;
  secret: string;
  event: DeliveredEvent;
  store_number: string | null;
  /** The location's language and name, and the request's own facts (chat formats only; null when gone). */
  language: string | null;
  location_name: string | null;
  request: RequestFacts | null;
}

export interface Outgoing {
  body: string;
  headers: Record<string, string>;
}

const CHAT_HEADERS = { 'content-type': 'application/json', 'user-agent': 'storeops-webhooks/1' };

/** The body and headers of an attempt made at `at`. `publicBaseUrl`: where the staff app is. */
export function outgoing(d: Formattable, at: Date, publicBaseUrl: string): Outgoing {
  if (d.format === 'signed') {
    const body = JSON.stringify(eventPayload(d.event, d.store_number));
    return { body, headers: signedHeaders(d.secret, d.event.uuid, body, at) };
  }
  const facts = cardFacts(d, publicBaseUrl);
  const message = d.format === 'slack' ? slackMessage(facts) : teamsMessage(facts);
  return { body: JSON.stringify(message), headers: { ...CHAT_HEADERS } };
}
