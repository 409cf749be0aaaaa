// The backup file: gzip-compressed JSON lines. A header (the applied migrations and the tables), a
// line per batch of one table's rows, and an end line with every table's count, so a file cut short
// (a full disk, an interrupted copy) is told apart from a whole one.
//
// The rows are PostgreSQL's own row_to_json text, written and sent back as they are: JSON.parse
// would round numeric and bigint values past 2^53, so a batch line is never parsed here; the
// server parses it when it loads it ($1::json).
import fs from 'node:fs';
import zlib from 'node:zlib';

export const FORMAT = 'storeops-backup';
export const VERSION = 1;

export interface BackupMigration {
  version: number;
  name: string;
}

export interface Header {
  format: typeof FORMAT;
  version: number;
  made_at: string;
  migrations: BackupMigration[];
  tables: string[];
}

export interface Trailer {
  end: true;
  counts: Record<string, number>;
  /** The last value each column's sequence handed out, by table and column (absent: never used). */
  sequences: Record<string, Record<string, string>>;
}

/** The file cannot be read as a backup: one line for the operator. */
export class BackupFileError extends Error {}

export function headerLine(header: Header): string {
  return `${JSON.stringify(header)}\n`;
}

/** A batch line, from the rows' JSON texts. The layout is fixed: batchOf reads it back. */
export function batchLine(table: string, rows: readonly string[]): string {
  return `{"table":${JSON.stringify(table)},"rows":[${rows.join(',')}]}\n`;
}

export function trailerLine(trailer: Trailer): string {
  return `${JSON.stringify(trailer)}\n`;
}

const BATCH = /^\{"table":("(?:[^"\\]|\\.)*"),"rows":(\[.*\])\}$/s;

/** A batch line's table and its rows' JSON text (an array), or null for another kind of line. */
export function batchOf(line: string): { table: string; rows: string } | null {
  const m = BATCH.exec(line);
  if (m === null) return null;
  return { table: JSON.parse(m[1] as string) as string, rows: m[2] as string };
}

function checkHeader(file: string, value: unknown): Header {
  const h = value as Partial<Header> | null;
  if (h === null || typeof h !== 'object' || h.format !== FORMAT)
    throw new BackupFileError(`${file} is not a storeops backup (npm run backup -- FILE makes one)`);
  if (h.version !== VERSION) {
    throw new BackupFileError(
      `${file} is a backup of format version ${String(h.version)}, and this release reads version ${VERSION}: restore it with the release that made it, or a newer one`,
    );
  }
  if (!Array.isArray(h.migrations) || !Array.isArray(h.tables) || typeof h.made_at !== 'string') throw new BackupFileError(`${file}: its header is incomplete`);
  return h as Header;
}

function gzipMessage(file: string, err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${file} does not exist`;
  if (code === 'EACCES') return `${file} cannot be read by this user`;
  if (code === 'Z_BUF_ERROR' || /unexpected end/i.test(err.message))
    return `${file} is cut short (its compressed data ends early): the backup was interrupted, or the copy is incomplete`;
  if (code?.startsWith('Z_')) return `${file} is not a storeops backup or is damaged (${err.message})`;
  return `${file}: ${err.message}`;
}

/**
 * The file's lines, gunzipped, split at '\n' only: readline also splits at a lone '\r' and at
 * U+2028 and U+2029, which JSON keeps unescaped inside strings. A read or decompression failure is
 * a BackupFileError.
 */
async function* lines(file: string): AsyncGenerator<string> {
  const input = fs.createReadStream(file);
  const gunzip = zlib.createGunzip();
  input.on('error', (err) => gunzip.destroy(err));
  let pending: Buffer[] = [];
  try {
    for await (const chunk of input.pipe(gunzip) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
        pending.push(chunk.subarray(start, end));
        yield Buffer.concat(pending).toString('utf8');
        pending = [];
        start = end + 1;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  } catch (err) {
    throw new BackupFileError(gzipMessage(file, err as Error));
  } finally {
    input.destroy();
    gunzip.destroy();
  }
  if (pending.length > 0) yield Buffer.concat(pending).toString('utf8');
}

function parseLine(file: string, line: string, n: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupFileError(`${file}: line ${n} is not JSON: the file is damaged`);
  }
}

/** The header alone (the restore checks it before it makes anything). */
export async function readHeader(file: string): Promise<Header> {
  for await (const line of lines(file)) return checkHeader(file, parseLine(file, line, 1));
  throw new BackupFileError(`${file} is empty`);
}

export type Entry = { kind: 'header'; header: Header } | { kind: 'batch'; table: string; rows: string } | { kind: 'end'; trailer: Trailer };

/** The file's entries in order; throws when it is not a whole backup (no end line, lines after it). */
export async function* readBackup(file: string): AsyncGenerator<Entry> {
  let n = 0;
  let header: Header | null = null;
  let ended = false;
  for await (const line of lines(file)) {
    n++;
    if (ended) throw new BackupFileError(`${file}: line ${n} follows the end line: the file is damaged`);
    if (header === null) {
      header = checkHeader(file, parseLine(file, line, n));
      yield { kind: 'header', header };
      continue;
    }
    const batch = batchOf(line);
    if (batch !== null) {
      if (!header.tables.includes(batch.table)) throw new BackupFileError(`${file}: line ${n} has rows of ${batch.table}, a table its header does not list`);
      yield { kind: 'batch', ...batch };
      continue;
    }
    const trailer = parseLine(file, line, n) as Partial<Trailer>;
    if (trailer.end !== true || typeof trailer.counts !== 'object' || trailer.counts === null)
      throw new BackupFileError(`${file}: line ${n} is neither rows nor the end line: the file is damaged`);
    ended = true;
    yield { kind: 'end', trailer: { end: true, counts: trailer.counts, sequences: trailer.sequences ?? {} } };
  }
  if (header === null) throw new BackupFileError(`${file} is empty`);
  if (!ended) throw new BackupFileError(`${file} is cut short (it has no end line after ${n} lines): the backup was interrupted, or the copy is incomplete`);
}

/** "12 345 rows in 31 tables (events 10000, ...)": the tables with rows, most first. */
export function describeCounts(counts: Record<string, number>): string {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const tables = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([t, n]) => `${t} ${n}`);
  return `${total} rows in ${Object.keys(counts).length} tables${tables.length > 0 ? ` (${tables.join(', ')})` : ''}`;
}
