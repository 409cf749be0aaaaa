// What applying a file does to the objects section 18 administers: the file owns what it writes
// (managed_by 'file'), an object administration made and the file names is taken over (with an
// audit entry saying so), and a new locker or display the file gives no key gets one made by the
// service, reported once by the apply.
import { auditInsert, provisioningActor } from '../audit/record.ts';
import type { Queryable } from '../db/db.ts';
import { makeKey } from './entries.ts';
import type { Owned, Upserted } from './upsert.ts';

export interface ApplyContext {
  q: Queryable;
  now: Date;
  /** The file's name, as the audit log names the provisioning actor. */
  source: string | null;
  madeKeys: { kind: 'locker' | 'cfh_display'; id: number; key: string }[];
}

/** The version column of most administered tables (a locker's is object_version). */
export const OWNED: Owned = { versionColumn: 'version' };

export async function exists(q: Queryable, table: 'lockers' | 'cfh_displays', id: number): Promise<boolean> {
  return (await q.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).length > 0;
}

/** A key made for a new object the file gives none. */
export function madeKey(ctx: ApplyContext, kind: 'locker' | 'cfh_display', id: number): string {
  const key = makeKey();
  ctx.madeKeys.push({ kind, id, key });
  return key;
}

export interface OwnedObject {
  type: string;
  id: number;
  name: string;
  organizationId: number;
  locationId: number | null;
}

/** The audit entry of an administration object the file took over. */
export async function tookOver(ctx: ApplyContext, done: Upserted, o: OwnedObject): Promise<void> {
  if (!done.takenOver) return;
  await ctx.q.run(
    auditInsert(
      {
        actor: provisioningActor(ctx.source),
        action: `${o.type}.taken_over`,
        target: { type: o.type, id: o.id, name: o.name },
        organizationId: o.organizationId,
        locationId: o.locationId,
        changes: { managed_by: { from: 'admin', to: 'file' } },
      },
      ctx.now,
    ),
  );
}
