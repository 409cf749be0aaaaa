// Keys given in a file must be hard to guess (issue 36, item 10): about 128 bits, estimated
// conservatively as length × log2(the alphabet of the character classes used), and no obvious
// repeats (a short pattern repeated, which such an estimate would overrate).
import { isExampleSecret } from '../example-secrets.ts';
import type { ProvisioningFile } from './schema.ts';

export const MIN_KEY_BITS = 128;

/** The estimated bits of a key: length × log2(size of the classes of characters it uses). */
export function keyBits(key: string): number {
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/];
  const sizes = [26, 26, 10, 33];
  const used = classes.filter((c) => c.test(key)).length;
  // A URL-safe base64 key (what the service and `openssl rand -base64` make) counts its 64
  // characters even when, by chance, it shows no digit or no capital: a random 22-character key
  // (128 bits) must pass.
  const base64url = /^[A-Za-z0-9_-]+$/.test(key) && used >= 2;
  const alphabet = base64url ? 64 : classes.reduce((n, c, i) => (c.test(key) ? n + (sizes[i] as number) : n), 0);
  // A key that is a shorter piece repeated is worth no more than that piece.
  let unit = key.length;
  for (let p = 1; p <= key.length / 2; p++) {
    if (key.length % p === 0 && key.slice(0, p).repeat(key.length / p) === key) {
      unit = p;
      break;
    }
  }
  // So is a long run of one character (five or more, which a random key all but never has): count it once.
  const runs = key.slice(0, unit).replace(/(.)\1{4,}/g, '$1').length;
  return alphabet === 0 ? 0 : runs * Math.log2(alphabet);
}

/** The file's secrets with where each is: the keys and tokens the service checks (whose strength
 * is asked for), then the secrets it signs or verifies with, which their other party chooses. */
function secretsOf(file: ProvisioningFile): { where: string; value: string; checked: boolean }[] {
  const all: { where: string; value: string | null | undefined; checked: boolean }[] = [
    ...(file.lockers ?? []).map((k, i) => ({ where: `lockers[${i}].api_key`, value: k.api_key, checked: true })),
    ...(file.cfh_displays ?? []).map((d, i) => ({ where: `cfh_displays[${i}].key`, value: d.key, checked: true })),
    ...(file.radio_edges ?? []).map((e, i) => ({ where: `radio_edges[${i}].device_key`, value: e.device_key, checked: true })),
    ...(file.api_tokens ?? []).map((t, i) => ({ where: `api_tokens[${i}].token`, value: t.token, checked: true })),
    ...(file.messaging_accounts ?? []).map((m, i) => ({ where: `messaging_accounts[${i}].auth_token`, value: m.auth_token, checked: false })),
    ...(file.webhooks ?? []).map((w, i) => ({ where: `webhooks[${i}].secret`, value: w.secret, checked: false })),
  ];
  return all.flatMap((s) => (typeof s.value === 'string' ? [{ ...s, value: s.value }] : []));
}

/** The fields of the file whose keys are too weak, each as "<field>: ..." (never the key itself). */
export function weakKeys(file: ProvisioningFile): string[] {
  return secretsOf(file)
    .filter((s) => s.checked && keyBits(s.value) < MIN_KEY_BITS)
    .map(
      (s) =>
        `${s.where}: too easy to guess (about ${Math.floor(keyBits(s.value))} bits; at least ${MIN_KEY_BITS} needed: use 22 or more random letters and digits)`,
    );
}

/** The fields of the file holding one of the documentation's example secrets (see example-secrets.ts). */
export function exampleKeys(file: ProvisioningFile): string[] {
  return secretsOf(file)
    .filter((s) => isExampleSecret(s.value))
    .map((s) => s.where);
}
