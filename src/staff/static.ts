// The staff app's front end: plain ES modules, CSS, its manifest, icons and service worker from
// src/staff/web, served as they are (no build step), plus the QR decoder (the npm package jsqr,
// loaded by the page only when scanning starts, where the browser has no barcode detector). The
// service worker and the page carry the service's version: an upgraded service is a new worker,
// which drops the old version's cache and reloads the app (the page never stays on an old release).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { loadWebFiles, webFile, type WebFile } from '../http/web-files.ts';
import { VERSION } from '../version.ts';

export const STAFF_WEB_DIR = path.join(import.meta.dirname, 'web');

/** Where a file's text names the release it belongs to. */
const VERSION_MARK = '__STOREOPS_VERSION__';

/** The QR decoder's path under /staff/assets/. */
export const DECODER = 'jsqr.js';

/** Every file of the app by its path under web/, with the version filled in, and the decoder. */
export function loadStaffFiles(dir = STAFF_WEB_DIR, version = VERSION): Map<string, WebFile> {
  const files = loadWebFiles(dir);
  for (const [name, file] of files) {
    if (!/\.(js|html|webmanifest)$/.test(name)) continue;
    const text = file.body.toString('utf8');
    if (text.includes(VERSION_MARK)) files.set(name, webFile(Buffer.from(text.replaceAll(VERSION_MARK, version)), file.type));
  }
  const decoder = createRequire(import.meta.url).resolve('jsqr/dist/jsQR.js');
  files.set(DECODER, webFile(fs.readFileSync(decoder), 'text/javascript; charset=utf-8'));
  return files;
}
