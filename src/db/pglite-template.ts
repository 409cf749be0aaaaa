// A new embedded database starts as a copy of a shipped template (an empty PGlite data directory,
// gzipped tar) instead of running PGlite's initdb: initdb runs a second PostgreSQL instance in
// memory and peaked the first start at over 1 GB, a copy needs a few MB. The template is made by
// the installed PGlite (`npm run pglite-template`); with another version installed it is not used
// and PGlite runs initdb as before (tests/db/pglite-template.test.ts says when to remake it).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.join(import.meta.dirname, 'pglite-template');
export const TEMPLATE_FILE = path.join(here, 'pgdata.tar.gz');
export const TEMPLATE_VERSION_FILE = path.join(here, 'version.json');

export function installedPgliteVersion(): string {
  // Its package.json is not exported: found from the entry point up.
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The PGlite version the shipped template was made with, or null when there is none. */
export function templateVersion(): string | null {
  try {
    return (JSON.parse(fs.readFileSync(TEMPLATE_VERSION_FILE, 'utf8')) as { pglite: string }).pglite;
  } catch {
    return null;
  }
}

/** Extracts a tar (regular files and directories: what PGlite's dumpDataDir writes) into dir. */
export function extractTar(tar: Buffer, dir: string): void {
  let offset = 0;
  const field = (start: number, length: number) => tar.toString('latin1', offset + start, offset + start + length).replace(/\0.*$/s, '');
  while (offset + 512 <= tar.length) {
    if (tar.subarray(offset, offset + 512).every((b) => b === 0)) break;
    const name = field(0, 100);
    const prefix = field(345, 155);
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const relative = path.posix.normalize(`${prefix ? `${prefix}/` : ''}${name}`).replace(/^\/+/, '');
    const target = path.resolve(dir, relative);
    if (target !== dir && !target.startsWith(dir + path.sep)) throw new Error(`template entry outside its directory: ${name}`);
    const body = offset + 512;
    if (type === '5') fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    else if (type === '0') {
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      fs.writeFileSync(target, tar.subarray(body, body + size), { mode: 0o600 });
    }
    offset = body + Math.ceil(size / 512) * 512;
  }
}

/**
 * Gives a new PGlite data directory the template's files, when the template fits the installed
 * PGlite. Returns whether it did. Extracted beside it and renamed, so a start interrupted half-way
 * never leaves a directory that looks like a database.
 */
export function seedPgliteDataDir(dataDir: string): boolean {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  if (!fs.existsSync(TEMPLATE_FILE) || templateVersion() !== installedPgliteVersion()) return false;
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) return false; // not ours to fill
  const staging = `${dataDir}.seeding-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
  extractTar(zlib.gunzipSync(fs.readFileSync(TEMPLATE_FILE)), staging);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.renameSync(staging, dataDir);
  return true;
}
