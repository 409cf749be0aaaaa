// One attempt of a claimed delivery: its event POSTed in the endpoint's format, outside any transaction, and the
// answer settled by the rules into what the attempt log records (delivered, retried when, failed).
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import type { AttemptRecord } from './attempt-store.ts';
import type { WebhookConnections } from './connections.ts';
import { postWebhook, type PostResult } from './post.ts';
import { outgoing } from './formats.ts';
import { settle } from './rules.ts';
import type { ClaimedDelivery } from './store.ts';

export interface AttemptDeps {
  clock: Clock;
  /** Kept-alive connections per origin, with the address guard. */
  connections: WebhookConnections;
  /** The whole exchange, connection to the end of the answer. */
  timeoutMs: number;
  /** Bytes of an answer's body read at most. */
  bodyCap: number;
  /** Aborted when the service stops: the attempt ends without a result. */
  signal: AbortSignal;
  /** PUBLIC_BASE_URL: a chat card's button opens the staff app there. */
  publicBaseUrl: string;
}

/** An attempt that ended, as the attempt log records it. */
export interface EndedAttempt {
  delivery: ClaimedDelivery;
  record: AttemptRecord;
  delivered: boolean;
}

/** One attempt; null when the service stopped it. */
export async function attemptDelivery(deps: AttemptDeps, delivery: ClaimedDelivery): Promise<EndedAttempt | null> {
  const at = deps.clock.now();
  // Signed JSON, or a Slack or Teams card: the endpoint's format (formats.ts).
  const { body, headers } = outgoing(delivery, at, deps.publicBaseUrl);
  const started = performance.now();
  const result: PostResult = await postWebhook(
    { url: delivery.url, body, headers },
    { timeoutMs: deps.timeoutMs, connections: deps.connections, bodyCap: deps.bodyCap, signal: deps.signal },
  );
  const durationMs = Math.round(performance.now() - started);
  if (result.aborted) return null;
  const outcome = settle(result, { failures: delivery.failures, retrySince: new Date(delivery.retry_since) }, deps.clock.now(), Math.random());
  return {
    delivery,
    delivered: outcome.state === 'delivered',
    record: {
      deliveryId: delivery.id,
      lease: delivery.lease,
      generation: delivery.generation,
      at,
      statusCode: result.statusCode,
      durationMs,
      error: result.error,
      state: outcome.state,
      nextAttemptAt: outcome.nextAttemptAt,
      failures: outcome.failures,
    },
  };
}
