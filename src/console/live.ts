// The console's live updates: a Server-Sent Events stream per open page that says "something of
// this kind changed" (callforhelp, locker, radio, device, webhooks); the page then reads its data
// again through the same reads as on load, so what it shows is always a consistent read and never
// a patch that could drift. Changes are learnt from commit signals (db/signals.ts), which reach
// every instance, so a change made anywhere reaches every console. A comment line every 20 seconds
// keeps proxies from closing the stream; closing the app ends every stream, and the browser's
// EventSource reconnects by itself (retry: 2 s) to whichever instance then answers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CommitSignals } from '../db/db.ts';

export const HEARTBEAT_MS = 20_000;
/** A burst of commits (a busy store) becomes at most one notice per kind this often. */
export const NOTICE_EVERY_MS = 500;

export type ChangeKind = 'events' | 'webhooks';

/** The open streams of one app, ended together when it closes. */
export class ConsoleStreams {
  readonly #commits: CommitSignals;
  readonly #open = new Set<() => void>();

  constructor(commits: CommitSignals) {
    this.#commits = commits;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Takes over the reply: an SSE stream until the client leaves or the app closes. */
  open(request: FastifyRequest, reply: FastifyReply): void {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\nevent: ready\ndata: {}\n\n');
    const pending = new Set<ChangeKind>();
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      timer = null;
      for (const kind of pending) res.write(`event: change\ndata: ${JSON.stringify({ kind })}\n\n`);
      pending.clear();
    };
    const notice = (kind: ChangeKind) => () => {
      pending.add(kind);
      timer ??= setTimeout(flush, NOTICE_EVERY_MS);
    };
    const offEvents = this.#commits.on('events', notice('events'));
    const offWebhooks = this.#commits.on('webhooks', notice('webhooks'));
    const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      offEvents();
      offWebhooks();
      clearInterval(heartbeat);
      if (timer !== null) clearTimeout(timer);
      this.#open.delete(end);
      res.end();
    };
    this.#open.add(end);
    request.raw.on('close', end);
    res.on('error', end);
  }

  closeAll(): void {
    for (const end of [...this.#open]) end();
  }
}
