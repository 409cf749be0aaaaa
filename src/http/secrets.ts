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

/** Replaces the value of secret query parameters in a URL, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:secret_token|token|api_key|key)=)[^&#]*/gi, '$1[REDACTED]');
}
