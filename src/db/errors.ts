// Recognising PostgreSQL's errors by their SQLSTATE.

interface PgError {
  code?: string;
}

// 57014: a statement canceled, by statement_timeout or an administrator; another try may succeed.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'ENOENT', '57014', '57P01', '57P02', '57P03']);

/** The database cannot be reached right now, took too long (a statement timeout), or has no room (class 53: a full disk, no memory, no
 * connection left): the request may succeed later (503, not 500); its transaction was rolled back. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as PgError & { message?: string };
  if (e?.code !== undefined && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08') || e.code.startsWith('53'))) return true;
  const message = e?.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|the database system is (starting|shutting) down/.test(
    message,
  );
}

/** The database refused a value it cannot store (a NUL byte, a character outside the encoding): the
 * request's fault, wherever a route let such a value through (400, never 500). */
export function isUnstorableValue(err: unknown): boolean {
  const code = (err as PgError)?.code;
  return code === '22021' || code === '22P05';
}
