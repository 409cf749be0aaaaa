// A setup object's key, made by the service (a locker's api_key, a display's key, a scan code): shown in the
// answer that makes or rotates it and never again. A rotation takes effect at the key's next use
// on every instance, since each use reads the stored digest; the audit entry says a key changed,
// never which.
import { auditActorOf, SECRET_CHANGE, writeAudit } from '../audit/record.ts';
import type { Tx } from '../db/db.ts';
import { sql } from '../db/sql.ts';
import type { ExpectedVersions } from '../http/if-match.ts';
import { makeKey } from '../provisioning/entries.ts';
import type { ObjectRow } from './object-store.ts';
import { changeable, type Acting, type Entry, type ObjectDeps, type ObjectKind } from './objects.ts';
import { objectById } from './object-store.ts';
import { scopeOf } from './rules.ts';

export async function rotateKeyOf<R extends ObjectRow>(
  deps: ObjectDeps,
  kind: ObjectKind<R, Entry>,
  acting: Acting,
  id: number,
  expected: ExpectedVersions,
  write: (tx: Tx, id: number, key: string) => Promise<void>,
  secret: { make: () => string; name: string } = { make: makeKey, name: 'key' },
): Promise<{ row: R; key: string }> {
  const scope = scopeOf(acting.actor);
  const now = deps.clock.now();
  const key = secret.make();
  return deps.db.tx(async (tx) => {
    const before = await changeable(tx, kind, scope, id, expected);
    await write(tx, id, key);
    const version = sql.raw(kind.source.versionColumn);
    await tx.run(sql`UPDATE ${sql.raw(kind.source.table)} SET ${version} = ${version} + 1, updated_at = ${now} WHERE id = ${id}`);
    const entry = kind.entryOf(before);
    await writeAudit(
      tx,
      {
        actor: auditActorOf(acting.actor),
        action: `${kind.type}.${secret.name}_rotated`,
        target: { type: kind.type, id, name: kind.nameOf(entry) },
        organizationId: before.organization_id,
        locationId: before.location_id,
        changes: { [secret.name]: { from: SECRET_CHANGE, to: SECRET_CHANGE } },
        origin: acting.origin,
      },
      now,
    );
    const row = (await objectById<R>(tx, kind.source, { organizationId: before.organization_id, locationIds: null }, id)) as R;
    return { row, key };
  });
}
