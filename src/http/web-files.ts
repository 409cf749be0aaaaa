// Front-end files served as they are in the repository (no build step): the console's (console/web)
// the customer pages' scripts (cfh/web) and the staff app (staff/web). They are read once when the app starts, each with the
// SHA-256 of its bytes as its ETag, so the first paint needs no disk read and a reload none of the
// bytes again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
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

/** Every file of a front end by its path under dir (e.g. `app.js`, `pages/queue.js`). */
export function loadWebFiles(dir: string): Map<string, WebFile> {
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

/** Answers a file: revalidated on every use (no-cache) by its ETag, 304 when the browser has it. */
export async function sendWebFile(request: FastifyRequest, reply: FastifyReply, file: WebFile): Promise<FastifyReply> {
  reply.headers({ 'cache-control': 'no-cache', etag: file.etag }).type(file.type);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}
