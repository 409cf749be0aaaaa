// Who closes what a test builds. A test that builds its own app, gateway, device or database closes
// it in its own teardown (`closeWith(t, ...)`, node:test's `t.after`), so a failure or a slow close
// is seen at that test. What a whole file shares (an app built in `before()`, the process's gateway,
// speech engines and database) is closed once, after the file's last test.
import { after, type TestContext as NodeTestContext } from 'node:test';

/** What a test's own teardown needs of node:test's test context (`async (t) => ...`). */
export type Teardown = Pick<NodeTestContext, 'after'>;

type Close = () => Promise<unknown>;

const closers: Close[] = [];
let database: Close | null = null;

// Registered when this module is first imported, so it belongs to the file's root and runs after
// its last test (an `after` called inside a hook would run when that hook's scope ends).
after(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await database?.();
});

/** Something for the file's end to close (an app, a gateway, a second database), newest first. */
export function closeAtEnd(close: Close): void {
  closers.push(close);
}

/** Closes with the test `t` when there is one, else at the file's end. */
export function closeWith(t: Teardown | undefined, close: Close): void {
  if (t === undefined) closeAtEnd(close);
  else t.after(close);
}

/** The process's database: closed after everything else the file's end closes. */
export function closeDatabaseAtEnd(close: Close): void {
  database = close;
}
