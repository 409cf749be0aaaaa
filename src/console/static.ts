// The console's front end: plain ES modules, CSS and one HTML page from src/console/web, served as
// they are in the repository (no build step). They are read once when the app starts, each with
// the SHA-256 of its bytes as its ETag, so the first paint needs no disk read and a reload none
// of the bytes again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const WEB_DIR = path.join(import.meta.dirname, 'web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface WebFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** A front-end file of these bytes, its ETag the SHA-256 of them. */
export function webFile(body: Buffer, type: string): WebFile {
  return { body, type, etag: `"${crypto.createHash('sha256').update(body).digest('base64url')}"` };
}

/** Every file of the front end by its path under web/ (e.g. `app.js`, `pages/queue.js`). */
export function loadWebFiles(dir = WEB_DIR): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else {
        const type = TYPES[path.extname(entry.name)];
        if (type === undefined) continue;
        files.set(rel, webFile(fs.readFileSync(path.join(dir, rel)), type));
      }
    }
  };
  walk('');
  return files;
}

/** Headers of every console answer: nothing but the service's own scripts, styles and media run
 * or load, the pages are never framed, and nothing leaks in a Referer. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' blob:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};
