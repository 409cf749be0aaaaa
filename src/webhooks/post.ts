// One webhook POST, guarded: the address is checked when the connection is made (a lookup of our
// own hands the socket only addresses it allows, so the address checked is the one connected to
// and DNS cannot rebind past it; a literal IP is checked before), a time limit over the whole
// exchange, no redirects followed, and the answer's body read only up to a small cap. Never
// throws: every outcome is a result for the attempt log.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { isPrivateAddress, type AttemptResult } from './rules.ts';

export interface PostOptions {
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE: loopback, link-local and private addresses are allowed. */
  allowPrivate: boolean;
  /** Bytes of the answer's body read at most; a longer body fails the attempt. */
  bodyCap: number;
  /** Aborts the attempt (the service is stopping): the result says `aborted`. */
  signal?: AbortSignal;
}

export interface PostResult extends AttemptResult {
  aborted: boolean;
}

/** dns.lookup, keeping only the addresses a webhook may connect to; none left: an error. */
const allowedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) {
      callback(err, '');
      return;
    }
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    const first = allowed[0];
    if (first === undefined) {
      const refused: NodeJS.ErrnoException = new Error(
        `refused: ${hostname} resolves to a private address (${addresses.map((a) => a.address).join(', ')}); set WEBHOOK_ALLOW_PRIVATE=true to allow it`,
      );
      refused.code = 'EWEBHOOKPRIVATE';
      callback(refused, '');
      return;
    }
    if (options.all === true) callback(null, allowed);
    else callback(null, first.address, first.family);
  });
};

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = String(e?.message ?? err);
  if (e?.code === 'EWEBHOOKPRIVATE') return message;
  return (e?.code !== undefined && !message.includes(e.code) ? `${e.code}: ${message}` : message).slice(0, 500);
}

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
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!opts.allowPrivate && net.isIP(host) !== 0 && isPrivateAddress(host)) {
    return Promise.resolve({ statusCode: null, error: `refused: ${host} is a private address; set WEBHOOK_ALLOW_PRIVATE=true to allow it`, aborted: false });
  }
  if (opts.signal?.aborted === true) return Promise.resolve({ statusCode: null, error: 'the service stopped', aborted: true });

  return new Promise((resolve) => {
    let statusCode: number | null = null;
    let settled = false;
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      headers: { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)), connection: 'close' },
      // A connection per attempt: each one looks the host up again and checks the address.
      agent: false,
      ...(opts.allowPrivate ? {} : { lookup: allowedLookup }),
    });
    const finish = (error: string | null, aborted = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      resolve({ statusCode, error, aborted });
    };
    const timer = setTimeout(() => finish(`no complete answer within ${opts.timeoutMs / 1000} s`), opts.timeoutMs);
    const onAbort = () => finish('the service stopped', true);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    request.on('error', (err) => finish(describe(err)));
    request.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > opts.bodyCap) finish(`the answer's body is over ${opts.bodyCap} bytes; not read further`);
      });
      res.on('end', () => {
        const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
        finish(redirect ? `redirects are not followed (${statusCode} to ${String(res.headers.location ?? '?').slice(0, 200)})` : null);
      });
      res.on('error', (err) => finish(describe(err)));
      res.on('close', () => finish('the connection closed before the answer ended'));
    });
    request.end(target.body);
  });
}
