// The break-glass administrator (contract section 17): an org_admin made from the command line with
// a one-time password, the way in before single sign-on is set up or while the provider is down.
// Run again for the same email it gives that person a new one-time password (and the role).
import { writeAudit, SECRET_CHANGE } from '../audit/record.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import { hashSecret, oneTimePassword } from './passwords.ts';
import { grantMemberships, insertPerson, personByEmail, setPassword } from './people-store.ts';
import { endPersonSessions } from './session-store.ts';

export class BreakGlassError extends Error {}

const commandLine = { type: 'system' as const, id: null, name: 'command line' };

export async function addBreakGlassAdmin(
  deps: { db: Db; clock: Clock },
  input: { email: string; organizationId: number; name?: string },
): Promise<{ personId: number; password: string; created: boolean }> {
  const email = input.email.trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) throw new BreakGlassError(`"${email}" is not an email address`);
  const password = oneTimePassword();
  const hash = await hashSecret(password);
  const now = deps.clock.now();
  return deps.db.tx(async (q) => {
    const [organization] = await q.run<{ id: number }>(sql`SELECT id FROM organizations WHERE id = ${input.organizationId}`);
    if (organization === undefined) throw new BreakGlassError(`organization ${input.organizationId} does not exist (provision it first)`);
    const existing = await personByEmail(q, email);
    if (existing !== undefined && existing.organization_id !== input.organizationId) {
      throw new BreakGlassError(`${email} is a person of organization ${existing.organization_id}`);
    }
    const name = input.name?.trim() || existing?.name || email.split('@')[0] || email;
    const personId =
      existing?.id ??
      (await insertPerson(q, { organizationId: input.organizationId, email, name, passwordHash: hash, mustChangePassword: true, managedBy: 'admin' }, now))?.id;
    if (personId === undefined) throw new BreakGlassError(`${email} was just made by someone else; run the command again`);
    if (existing !== undefined) {
      await setPassword(q, personId, hash, true, now);
      await q.run(sql`UPDATE people SET status = 'active' WHERE id = ${personId}`);
      await endPersonSessions(q, personId, now);
    }
    await grantMemberships(q, { personId, organizationId: input.organizationId, role: 'org_admin', locationIds: null, grantedBy: 'admin' }, now);
    const target = { type: 'person', id: personId, name };
    await writeAudit(
      q,
      existing === undefined
        ? {
            actor: commandLine,
            action: 'person.created',
            target,
            organizationId: input.organizationId,
            changes: { email: { from: null, to: email }, name: { from: null, to: name }, password: { from: null, to: SECRET_CHANGE } },
          }
        : {
            actor: commandLine,
            action: 'person.password_reset',
            target,
            organizationId: input.organizationId,
            changes: { password: { from: SECRET_CHANGE, to: SECRET_CHANGE } },
          },
      now,
    );
    await writeAudit(
      q,
      { actor: commandLine, action: 'membership.granted', target, organizationId: input.organizationId, changes: { role: { from: null, to: 'org_admin' } } },
      now,
    );
    return { personId, password, created: existing === undefined };
  });
}
