// The messaging provider's webhook signature (contract section 2): base64 of HMAC-SHA1, keyed with
// the account's auth token, over the full public URL followed by every form field sorted by name,
// each as name then value with no separators; a repeated field contributes each of its values,
// sorted. Plain functions, no HTTP.
import crypto from 'node:crypto';
import { safeEqual } from '../http/secrets.ts';

export type FormFields = Readonly<Record<string, string | readonly string[]>>;

// Names and values sort by UTF-16 code unit (JavaScript's default), as the provider's libraries do.
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The signed text. With `distinctValues`, a value repeated within one field counts once: the
 * provider's own Node library signs that way, the contract's wording does not; the two differ only
 * when a field repeats a value.
 */
export function signedContent(url: string, fields: FormFields, opts: { distinctValues?: boolean } = {}): string {
  let content = url;
  for (const name of Object.keys(fields).sort(byCodeUnit)) {
    const value = fields[name];
    if (value === undefined) continue;
    let values = typeof value === 'string' ? [value] : [...value];
    if (opts.distinctValues) values = [...new Set(values)];
    for (const v of values.sort(byCodeUnit)) content += name + v;
  }
  return content;
}

export function messagingSignature(authToken: string, url: string, fields: FormFields, opts: { distinctValues?: boolean } = {}): string {
  return crypto
    .createHmac('sha1', authToken)
    .update(signedContent(url, fields, opts), 'utf8')
    .digest('base64');
}

/** Whether `given` signs this request; compared in constant time. */
export function isValidMessagingSignature(authToken: string, url: string, fields: FormFields, given: string): boolean {
  if (safeEqual(messagingSignature(authToken, url, fields), given)) return true;
  const repeatsAValue = Object.values(fields).some((v) => typeof v !== 'string' && new Set(v).size !== v.length);
  return repeatsAValue && safeEqual(messagingSignature(authToken, url, fields, { distinctValues: true }), given);
}
