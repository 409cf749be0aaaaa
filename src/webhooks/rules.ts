// The rules of webhooks, without I/O: which targets are allowed, the signature, when a failed
// attempt is tried again and when a delivery gives up, and what a token may read.
import crypto from 'node:crypto';

// --- targets ---

/** Why a URL cannot be a webhook target (null: it can). The address it resolves to is checked at
 * each delivery (post.ts), not here: DNS can change between now and then. */
export function targetUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, not ${url.protocol.slice(0, 20)}`;
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (every request is signed with the secret)';
  if (url.hostname === '') return 'must name a host';
  return null;
}

function ipv4Value(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value;
}

/** The 128 bits of an IPv6 address (a zone id and an embedded IPv4 are understood), or null. */
function ipv6Value(text: string): bigint | null {
  let s = text.split('%')[0] ?? '';
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return null;
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4Value(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string | undefined) => (h === undefined || h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...rest];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

const V4_REFUSED: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const V6_REFUSED: readonly [string, number][] = [
  // unspecified, loopback and the deprecated IPv4-compatible forms
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  // unique-local (fc00::/7, cloud metadata such as fd00:ec2::254), link-local, site-local, multicast
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

/** IPv6 ranges that carry an IPv4 address, and its place (bits right of it): the address is
 * judged by that IPv4. */
const V6_EMBEDDING_V4: readonly [string, number, number][] = [
  ['::ffff:0:0', 96, 0], // IPv4-mapped
  ['::ffff:0:0:0', 96, 0], // IPv4-translated
  ['64:ff9b::', 96, 0], // NAT64
  ['2002::', 16, 80], // 6to4: the IPv4 follows the prefix
];

const inV4 = (value: number, [base, bits]: readonly [string, number]) =>
  bits === 0 || Math.floor(value / 2 ** (32 - bits)) === Math.floor((ipv4Value(base) as number) / 2 ** (32 - bits));

const inV6 = (value: bigint, base: string, bits: number) => value >> BigInt(128 - bits) === (ipv6Value(base) as bigint) >> BigInt(128 - bits);

/**
 * Loopback, link-local (cloud metadata included), unique-local, private, CGNAT, unspecified,
 * multicast, reserved or documentation addresses, in either family and in IPv4-mapped (or other
 * IPv4-embedding) IPv6 forms. Anything that is not an IP address counts as refused.
 */
export function isPrivateAddress(address: string): boolean {
  const v4 = ipv4Value(address);
  if (v4 !== null) return V4_REFUSED.some((range) => inV4(v4, range));
  const v6 = ipv6Value(address);
  if (v6 === null) return true;
  for (const [base, bits, shift] of V6_EMBEDDING_V4) {
    if (inV6(v6, base, bits)) return isPrivateAddress(ipv4Text(Number((v6 >> BigInt(shift)) & 0xffffffffn)));
  }
  return V6_REFUSED.some(([base, bits]) => inV6(v6, base, bits));
}

function ipv4Text(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

// --- signature ---

/** `x-signature`: lowercase hex HMAC-SHA256 keyed with the endpoint's secret over the
 * `x-timestamp` value followed directly by the raw body. */
export function signature(secret: string, timestamp: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(timestamp).update(body).digest('hex');
}

/** The headers of one attempt; the timestamp is the attempt's own (Unix seconds). */
export function signedHeaders(secret: string, eventUuid: string, body: string, at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'content-type': 'application/json',
    'user-agent': 'storeops-webhooks/1',
    'x-event-id': eventUuid,
    'x-timestamp': timestamp,
    'x-signature': signature(secret, timestamp, body),
  };
}

// --- retries ---

/** The first retry comes 5 to 10 s after the first failure, then the wait doubles up to an hour. */
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_MS = 60 * 60_000;
/** How long a delivery is retried before it is failed: from its creation or its last redelivery. */
export const RETRY_FOR_MS = 24 * 60 * 60_000;

/** The wait before the next attempt after `failures` failures in a row: half of it fixed, half
 * random (`random` in [0, 1)), so the endpoints that failed together do not come back together. */
export function retryDelayMs(failures: number, random: number): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 20));
  return Math.round(base / 2 + (random * base) / 2);
}

// --- the circuit breaker of a dead endpoint ---

/** Failed attempts in a row (of any of its deliveries) that open an endpoint's breaker. */
export const BREAKER_FAILURES = 8;

/**
 * How long an open breaker holds the endpoint's deliveries before one of them probes it: as long as
 * the endpoint has been failing (so the probes' waits double, as a delivery's retries do), at least
 * the first retry's 5 to 10 s and at most an hour, half of it random.
 */
export function breakerDelayMs(failingForMs: number, random: number): number {
  const base = Math.min(MAX_RETRY_MS, Math.max(FIRST_RETRY_MS, failingForMs));
  return Math.round(base / 2 + (random * base) / 2);
}

export interface AttemptResult {
  /** The receiver's status; null when it never answered. */
  statusCode: number | null;
  /** Why the attempt failed when the status alone does not say (null: it does, or it succeeded). */
  error: string | null;
}

/** Delivered: a 2xx answer, read to its end within the time and size limits. */
export const isDelivered = (r: AttemptResult) => r.error === null && r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

export interface Settlement {
  state: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  failures: number;
}

/** Where a delivery stands after an attempt. */
export function settle(result: AttemptResult, delivery: { failures: number; retrySince: Date }, now: Date, random: number): Settlement {
  if (isDelivered(result)) return { state: 'delivered', nextAttemptAt: null, failures: delivery.failures };
  const failures = delivery.failures + 1;
  if (now.getTime() - delivery.retrySince.getTime() >= RETRY_FOR_MS) return { state: 'failed', nextAttemptAt: null, failures };
  return { state: 'pending', nextAttemptAt: new Date(now.getTime() + retryDelayMs(failures, random)), failures };
}
