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

/** Query parameters whose value is a customer's capability (the request's message_id, a display's
 * key): whoever holds one follows, cancels or asks for help (contract section 9). */
const CAPABILITY_NAME = /^(messageid|displaykey)$/;

/** Paths whose segment is such a capability: the customer pages, the QR code's path, C9 and B2. */
const CAPABILITY_PATHS = [
  /^(\/help\/t\/)([^/?#]+)/,
  /^(\/help\/)(?!t\/)([^/?#]+)/,
  /^(\/callforhelp\/v1\/display\/)([^/?#]+)/,
  /^(\/api\/callforhelp\/displays\/)([^/?#]+)/,
  /^(\/api\/callbutton\/)(?!press(?:[/?#]|$))([^/?#]+)/,
];

/** A capability as logs show it: `~` and 12 hex digits of its SHA-256, enough for an operator who
 * has the customer's id to find its lines (`sha256(id)`), useless to whoever reads the log. */
export function capabilityDigest(value: string): string {
  let decoded = value;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    // an invalid escape: digest it as it came
  }
  return `~${sha256hex(decoded).slice(0, 12)}`;
}

/** Replaces the value of secret query parameters in a URL, for logs, however the name is encoded
 * and whichever separator (`&` or `;`) a parser might take; a customer's capability, in the path or
 * the query, is replaced by its short digest. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  let path = start < 0 ? url : url.slice(0, start);
  for (const pattern of CAPABILITY_PATHS) path = path.replace(pattern, (_, prefix: string, value: string) => `${prefix}${capabilityDigest(value)}`);
  if (start < 0) return path;
  const query = url.slice(start + 1).replace(/([^&;=]*)=([^&;]*)/g, (pair: string, name: string, value: string) => {
    const reduced = paramName(name);
    if (SECRET_NAME.test(reduced)) return `${name}=[REDACTED]`;
    return CAPABILITY_NAME.test(reduced) ? `${name}=${capabilityDigest(value)}` : pair;
  });
  return `${path}?${query}`;
}
