// Passwords and PINs are stored as Argon2id (node:crypto, never on the event loop) in the PHC string
// format, which carries its own parameters: a later change of cost still verifies what was stored
// before it. Where the hashing runs is a Hasher: the running service's is one low-priority worker
// thread (low-priority-hasher.ts); the command line's, libuv's thread pool.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const argon2 = promisify(crypto.argon2);

export interface Cost {
  memory: number;
  passes: number;
  parallelism: number;
  tagLength: number;
}

/** Where Argon2id runs. */
export interface Hasher {
  derive(secret: string, salt: Buffer, cost: Cost): Promise<Buffer>;
  close(): Promise<void>;
}

/** libuv's thread pool: for a command or a test, which have no requests to keep fast. */
export const threadPoolHasher: Hasher = {
  derive: (secret, salt, cost) => argon2('argon2id', { message: Buffer.from(secret, 'utf8'), nonce: salt, ...cost }),
  close: async () => {},
};

/** OWASP's first Argon2id setting: 19 MiB, two passes, one lane (about 30 ms here). */
const COST = { memory: 19_456, passes: 2, parallelism: 1 } as const;
const TAG_LENGTH = 32;
const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{16,64})\$([A-Za-z0-9+/]{32,128})$/;

/** Longer inputs are refused before hashing (a megabyte password costs memory, not security). */
export const SECRET_MAX_LENGTH = 256;
export const PASSWORD_MIN_LENGTH = 12;

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/** The PHC string of a new hash of the secret. */
export async function hashSecret(secret: string, hasher: Hasher = threadPoolHasher): Promise<string> {
  const salt = crypto.randomBytes(16);
  const tag = await hasher.derive(secret, salt, { ...COST, tagLength: TAG_LENGTH });
  return `$argon2id$v=19$m=${COST.memory},t=${COST.passes},p=${COST.parallelism}$${b64(salt)}$${b64(tag)}`;
}

/** A stored hash nobody's secret matches, verified when there is nothing to verify against, so that a
 * wrong email costs what a wrong password does (the answer's time does not tell which). */
let decoy: Promise<string> | null = null;

/** Whether the secret matches the stored PHC string (null: nothing stored; it still takes a hash's time). */
export async function verifySecret(secret: string, stored: string | null, hasher: Hasher = threadPoolHasher): Promise<boolean> {
  decoy ??= hashSecret(crypto.randomBytes(16).toString('hex'));
  const phc = PHC.exec(stored ?? (await decoy));
  if (phc === null || secret.length > SECRET_MAX_LENGTH) return false;
  const [, m, t, p, salt, tag] = phc as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(tag, 'base64');
  const given = await hasher.derive(secret, Buffer.from(salt, 'base64'), {
    memory: Number(m),
    passes: Number(t),
    parallelism: Number(p),
    tagLength: expected.length,
  });
  return stored !== null && given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** A one-time password: 20 characters of 32 letters and digits (100 bits), none that look alike. */
export function oneTimePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789A';
  const bytes = crypto.randomBytes(20);
  return Array.from(bytes, (b) => alphabet[b % 32]).join('');
}

/** What is wrong with a new password, if anything (section 17: at least 12 characters). */
export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > SECRET_MAX_LENGTH) return `must be at most ${SECRET_MAX_LENGTH} characters`;
  return null;
}

/** What is wrong with a PIN, if anything (6 to 12 digits). */
export function pinProblem(pin: string): string | null {
  return /^\d{6,12}$/.test(pin) ? null : 'must be 6 to 12 digits';
}
