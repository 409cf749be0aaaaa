// One webhook POST, guarded: the address is checked when a connection is made (connections.ts: a
// lookup of our own hands the socket only addresses it allows, so the address checked is the one
// connected to and DNS cannot rebind past it; a literal IP is checked here), a time limit over the
// whole exchange (the wait for a connection included), no redirects followed, and the answer's
// body read only up to a small cap. Never throws: every outcome is a result for the attempt log.
//
// Connections are kept open between attempts (connections.ts). A kept connection that the
// receiver closed just as it was reused fails before any answer; the request is then sent again
// on another, within the same time limit. The receiver may have read the first one before closing,
// so it can get the event twice in one attempt: at least once, as the contract says (receivers
// drop a repeated event by its uuid).
import http from 'node:http';
import https from 'node:https';
import type { WebhookConnections } from './connections.ts';
import type { AttemptResult } from './rules.ts';

export interface PostOptions {
  timeoutMs: number;
  /** Bytes of the answer's body read at most; a longer body fails the attempt. */
  bodyCap: number;
  /** The pool of kept connections, with the address guard and WEBHOOK_ALLOW_PRIVATE. */
  connections: WebhookConnections;
  /** Aborts the attempt (the service is stopping): the result says `aborted`. */
  signal?: AbortSignal;
  /** Bytes of the answer's body kept as `bodyExcerpt` (testWebhook shows them); 0 or absent: none. */
  excerptBytes?: number;
}

export interface PostResult extends AttemptResult {
  aborted: boolean;
  /** The start of the answer's body, as text (excerptBytes asked for it). */
  bodyExcerpt?: string;
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = String(e?.message ?? err);
  if (e?.code === 'EWEBHOOKPRIVATE') return message;
  return (e?.code !== undefined && !message.includes(e.code) ? `${e.code}: ${message}` : message).slice(0, 500);
}

/** How a kept connection that the other end closed meanwhile fails a request written to it. */
const CLOSED_UNDER_US = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export function postWebhook(target: { url: string; body: string; headers: Record<string, string> }, opts: PostOptions): Promise<PostResult> {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return Promise.resolve({ statusCode: null, error: 'the URL is not valid', aborted: false });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.resolve({ statusCode: null, error: `refused: ${url.protocol} is not http or https`, aborted: false });
  }
  // A literal address is connected to without a lookup: it is checked here instead.
  const problem = opts.connections.literalProblem(url.hostname.replace(/^\[(.*)\]$/, '$1'));
  if (problem !== null) return Promise.resolve({ statusCode: null, error: problem, aborted: false });
  if (opts.signal?.aborted === true) return Promise.resolve({ statusCode: null, error: 'the service stopped', aborted: true });

  return new Promise((resolve) => {
    let statusCode: number | null = null;
    let settled = false;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const excerptBytes = opts.excerptBytes ?? 0;
    let request: http.ClientRequest | undefined;
    const client = url.protocol === 'https:' ? https : http;
    const headers = { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)) };

    const finish = (error: string | null, aborted = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // A complete answer leaves its connection to the pool; anything else closes it.
      if (error !== null || aborted) request?.destroy();
      const result: PostResult = { statusCode, error, aborted };
      if (excerptBytes > 0 && statusCode !== null) result.bodyExcerpt = Buffer.concat(kept).subarray(0, excerptBytes).toString('utf8');
      resolve(result);
    };

    const send = () => {
      request = client.request(url, { method: 'POST', headers, agent: opts.connections.agentFor(url) });
      const sent = request;
      let answered = false;
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (!answered && sent.reusedSocket && !settled && CLOSED_UNDER_US.has(err.code ?? '')) sendOrFail();
        else finish(describe(err));
      });
      sent.on('response', (res) => {
        answered = true;
        statusCode = res.statusCode ?? null;
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (keptBytes < excerptBytes) {
            kept.push(chunk);
            keptBytes += chunk.length;
          }
          if (bytes > opts.bodyCap) finish(`the answer's body is over ${opts.bodyCap} bytes; not read further`);
        });
        res.on('end', () => {
          const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
          finish(redirect ? `redirects are not followed (${statusCode} to ${String(res.headers.location ?? '?').slice(0, 200)})` : null);
        });
        res.on('error', (err) => finish(describe(err)));
        res.on('close', () => finish('the connection closed before the answer ended'));
      });
      sent.end(target.body);
    };

    // A request that cannot even be made (a header Node refuses, say) is a failed attempt, never a throw.
    const sendOrFail = () => {
      try {
        send();
      } catch (err) {
        finish(describe(err));
      }
    };

    const timer = setTimeout(() => finish(`no complete answer within ${opts.timeoutMs / 1000} s`), opts.timeoutMs);
    const onAbort = () => finish('the service stopped', true);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    sendOrFail();
  });
}
