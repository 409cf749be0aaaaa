// Secrets are compared in constant time and stored as SHA-256 digests. Every secret the service
// hands out or accepts carries at least 128 random bits, so a fast digest is enough.
import crypto from 'node:crypto';

export function sha256hex(value: string): string {
  return crypto.createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time equality of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const da = crypto.createHash('sha256').update(a, 'utf8').digest();
  const db = crypto.createHash('sha256').update(b, 'utf8').digest();
  return crypto.timingSafeEqual(da, db) && a.length === b.length;
}

/** Constant-time check of a secret against a stored SHA-256 hex digest. */
export function matchesDigest(secret: string, digestHex: string): boolean {
  const given = crypto.createHash('sha256').update(secret, 'utf8').digest();
  const stored = Buffer.from(digestHex, 'hex');
  return stored.length === given.length && crypto.timingSafeEqual(given, stored);
}

/** A URL-safe random token (A-Z a-z 0-9 - _) of the given number of random bytes. */
export function randomToken(bytes = 24): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/** A query parameter whose name, reduced to its letters and digits, holds one of these never has its
 * value logged: `secret_token`, `secret_token[]`, `secret+token`, `%20secret_token`, `api-key`... */
const SECRET_NAME = /secret|token|key|password|signature/;

/** A parameter name as a lenient parser could read it: percent-escapes decoded byte by byte,
 * lower case, and only its letters and digits kept. */
function paramName(raw: string): string {
  return raw
    .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** Replaces the value of secret query parameters in a URL, for logs, however the name is encoded
 * and whichever separator (`&` or `;`) a parser might take. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .replace(/([^&;=]*)=([^&;]*)/g, (pair: string, name: string) => (SECRET_NAME.test(paramName(name)) ? `${name}=[REDACTED]` : pair));
  return `${url.slice(0, start + 1)}${query}`;
}
