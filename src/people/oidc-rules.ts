// Single sign-on's pure decisions (contract section 17): which issuers the relying party accepts,
// which hosts are loopback, and where a browser may be sent back to after signing in.
import net from 'node:net';

const RETURN_TO_DEFAULT = '/console';
/** What `return_to` may be as given, and once percent-encoded (it is kept with the flow). */
const RETURN_TO_MAX = 512;
const RETURN_TO_ENCODED_MAX = 2048;

/** An https URL, or http on this host only (tests, a provider beside the service): else a clear throw. */
export function checkIssuer(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`OIDC_ISSUER is not a URL: ${value}`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new Error(`OIDC_ISSUER must have no query, fragment or credentials: ${value}`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  if (url.protocol === 'http:') throw new Error(`OIDC_ISSUER may use http only on a loopback address (127.0.0.0/8, ::1, localhost); use https for ${url.host}`);
  throw new Error(`OIDC_ISSUER must be an https URL: ${value}`);
}

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 (and 127/8 mapped into IPv6) and localhost: the names that never leave this host. */
export function isLoopbackHost(hostname: string): boolean {
  // A URL's hostname: lower-case, IPv4 in dotted form, IPv6 in brackets.
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost' || host === 'localhost.') return true;
  const family = net.isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Where to send the browser after signing in: a path of this service only, as it goes in a Location
 * header (percent-encoded ASCII). Anything a browser could read as another origin (`//host`,
 * `/\host`, a scheme, dot segments that end as `//host`) or that carries control characters is
 * replaced by the console's path.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > RETURN_TO_MAX) return RETURN_TO_DEFAULT;
  if (!value.startsWith('/') || value[1] === '/' || value[1] === '\\') return RETURN_TO_DEFAULT;
  // Browsers drop tabs and newlines from URLs and read `\` as `/`, so `/\t/evil` is `//evil`.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]/u.test(value)) return RETURN_TO_DEFAULT;
  const base = 'http://service.invalid';
  let resolved: URL;
  try {
    resolved = new URL(value, base);
  } catch {
    return RETURN_TO_DEFAULT;
  }
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  if (resolved.origin !== base || path.startsWith('//') || path.length > RETURN_TO_ENCODED_MAX) return RETURN_TO_DEFAULT;
  return path;
}
