// The bench world's person (contract section 17): the provisioning file makes them (never with a
// password), the bench sets their password in the database as an administrator's tool would (a PHC
// string from the service's own hashSecret, so the format is the one sign-in verifies), then signs
// in over HTTP as the console's page does.
import pg from 'pg';
import { hashSecret } from '../../src/people/passwords.ts';

export interface BenchPerson {
  email: string;
  password: string;
}

export interface BenchSession {
  /** `storeops_session=…`, for the cookie header. */
  cookie: string;
  csrf: string;
}

/** Sets the password of these people (the rows exist: the provisioning file made them), one hash for all. */
export async function setPassword(databaseUrl: string, emails: readonly string[], password: string): Promise<void> {
  const hash = await hashSecret(password);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('UPDATE people SET password_hash = $2, must_change_password = false WHERE lower(email) = ANY ($1)', [
      emails.map((e) => e.toLowerCase()),
      hash,
    ]);
    if (rowCount !== emails.length) throw new Error(`${emails.length - (rowCount ?? 0)} of these people are missing: was the world provisioned?`);
  } finally {
    await client.end();
  }
}

/** POST /api/session with email and password; the new session's cookie and CSRF token. */
export async function signIn(url: string, person: BenchPerson): Promise<BenchSession> {
  const res = await fetch(`${url}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: person.email, password: person.password }),
  });
  if (res.status !== 200) throw new Error(`signing in failed: ${res.status} ${await res.text()}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const { csrf_token: csrf } = (await res.json()) as { csrf_token: string };
  return { cookie, csrf };
}

/** The password of the bench world's people set (they share one: bench/harness/world.ts), then one session of its person for the run. */
export async function benchSession(
  url: string,
  databaseUrl: string,
  world: { person: BenchPerson; signInPeople: readonly BenchPerson[] },
): Promise<BenchSession> {
  const emails = [world.person, ...world.signInPeople].map((p) => p.email);
  await setPassword(databaseUrl, emails, world.person.password);
  return signIn(url, world.person);
}
