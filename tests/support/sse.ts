// A Server-Sent Events client for the stream tests, over fetch: what a browser's EventSource reads.
import { closeWith, type Teardown } from './teardown.ts';

export interface SseEvent {
  event: string;
  data: string;
}

export interface SseClient {
  readonly status: number;
  readonly headers: Headers;
  /** Every comment line received so far (heartbeats). */
  readonly comments: string[];
  /** The next event (of that name, when given) not yet taken; rejects after `ms`. */
  next(event?: string, ms?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens `url` as an event stream, closed with the test `t`. */
export async function openSse(t: Teardown, url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  let buffer = '';
  const ended = (async () => {
    if (res.body === null) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) events.push({ event, data: data.join('\n') });
        }
        wake();
      }
    } catch {
      // aborted by close()
    }
    wake();
  })();
  let done = false;
  void ended.then(() => {
    done = true;
    wake();
  });
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    comments,
    ended,
    async next(event?: string, ms = 5_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const i = events.findIndex((e) => event === undefined || e.event === event);
        if (i >= 0) return events.splice(i, 1)[0] as SseEvent;
        if (done) throw new Error(`the stream ended before an event${event === undefined ? '' : ` "${event}"`} came`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event${event === undefined ? '' : ` "${event}"`} within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const w = () => {
            clearTimeout(timer);
            waiters.delete(w);
            resolve();
          };
          const timer = setTimeout(w, left);
          waiters.add(w);
        });
      }
    },
    close: () => abort.abort(),
  };
  closeWith(t, async () => {
    abort.abort();
    await ended;
  });
  return client;
}
