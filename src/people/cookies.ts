// The two cookies of section 17: the session (256 random bits, HttpOnly, SameSite=Lax since the
// sign-in comes back from the identity provider's site, a new value at every sign-in) and an
// enrolled store device's (long-lived, kept across sign-outs until it is revoked).
import type { FastifyRequest } from 'fastify';
import { header } from '../http/auth.ts';

export const SESSION_COOKIE = 'storeops_session';
export const DEVICE_COOKIE = 'storeops_device';

/** The most a session lasts, signed in again or not: 7 days. */
export const SESSION_MAX_SECONDS = 7 * 24 * 60 * 60;
/** A shift on a store device (badge or PIN) lasts at most 12 hours. */
export const SHIFT_MAX_SECONDS = 12 * 60 * 60;
/** A store device's cookie: ten years, in practice until it is revoked. */
const DEVICE_MAX_SECONDS = 10 * 365 * 24 * 60 * 60;

/** A cookie's value in a request, if it is of the form the service makes (base64url). */
export function cookieOf(request: FastifyRequest, name: string): string | null {
  const raw = header(request, 'cookie');
  if (raw === undefined) return null;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : null;
  }
  return null;
}

function cookieHeader(name: string, value: string | null, maxAgeSeconds: number, secure: boolean): string {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
  if (value === null) return [`${name}=`, 'Max-Age=0', ...attrs].join('; ');
  return [`${name}=${value}`, `Max-Age=${maxAgeSeconds}`, ...attrs].join('; ');
}

/** Set-Cookie of a session (null: its removal). */
export const sessionCookieHeader = (value: string | null, secure: boolean): string => cookieHeader(SESSION_COOKIE, value, SESSION_MAX_SECONDS, secure);

/** Set-Cookie of an enrolled store device (null: its removal, once it is revoked). */
export const deviceCookieHeader = (value: string | null, secure: boolean): string => cookieHeader(DEVICE_COOKIE, value, DEVICE_MAX_SECONDS, secure);
