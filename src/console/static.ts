// The console's front end: plain ES modules, CSS and one HTML page from src/console/web, served as
// they are in the repository (no build step; http/web-files.ts reads them once, with ETags).
import path from 'node:path';
import { loadWebFiles as loadFiles, type WebFile } from '../http/web-files.ts';

export const WEB_DIR = path.join(import.meta.dirname, 'web');

/** Every file of the front end by its path under web/ (e.g. `app.js`, `pages/queue.js`). */
export function loadWebFiles(dir = WEB_DIR): Map<string, WebFile> {
  return loadFiles(dir);
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
