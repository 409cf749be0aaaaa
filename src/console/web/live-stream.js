// The store's live stream for a page, the console's and the staff app's: Server-Sent Events from
// GET /console/api/locations/{id}/stream. While no stream is live (refused: the service at its
// limit of streams answers 429; or the service away) the page's `poll` reads its data every 10 s,
// so what it shows keeps moving; a stream closed for good is tried again after 2 s, then twice as
// long each time up to 30 s, while `stillSignedIn` says the session holds.

/** While no stream is live, the page reads its data again this often. */
export const FALLBACK_POLL_MS = 10_000;
const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 30_000;

/**
 * Opens the location's stream. `onLive` when it is ready (read everything again), `onChange` with
 * each change notice, `onDown` when it drops; `stillSignedIn` is asked before a retry (false: the
 * page signs out, and the stream stays closed).
 */
export function openLiveStream(locationId, { onLive, onChange, onDown, poll, stillSignedIn }) {
  let source = null;
  let fallback = null;
  let retry = null;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  const stopFallback = () => {
    clearInterval(fallback);
    fallback = null;
  };
  const connect = () => {
    const mine = new EventSource(`/console/api/locations/${locationId}/stream`);
    source = mine;
    mine.addEventListener('ready', () => {
      stopFallback();
      retryMs = FIRST_RETRY_MS;
      onLive();
    });
    mine.addEventListener('change', (e) => onChange(JSON.parse(e.data)));
    mine.addEventListener('error', async () => {
      onDown();
      fallback ??= setInterval(() => !closed && poll(), FALLBACK_POLL_MS);
      if (mine.readyState !== EventSource.CLOSED || closed) return;
      const wait = retryMs;
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      if (!(await stillSignedIn()) || closed) return;
      retry = setTimeout(() => !closed && connect(), wait);
    });
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      stopFallback();
      source?.close();
    },
  };
}
