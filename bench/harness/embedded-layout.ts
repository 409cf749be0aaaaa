// The embedded PostgreSQL server's place in DATA_DIR, as docs/operations.md documents it: its data
// directory `postgres/` (with postmaster.pid), its only way in the Unix socket in that directory,
// user and database `storeops`, no password. The bench reads it from there, as an operator would.
import path from 'node:path';

export function serverDir(dataDir: string): string {
  return path.join(dataDir, 'postgres');
}

/** The connection URL of the embedded server of `dataDir`. */
export function embeddedUrl(dataDir: string): string {
  return `postgresql://storeops@localhost/storeops?host=${encodeURIComponent(serverDir(dataDir))}`;
}
