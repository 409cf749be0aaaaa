// What the audit log's tests share: an organization with two locations, its org_admin and an admin
// token, and entries written as a change writes them, at times of the test's choosing.
import type { AuditEntry } from '../../src/audit/record.ts';
import { writeAudit } from '../../src/audit/record.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { makePerson, type TestPerson } from '../support/people.ts';
import { freshId, makeWorld, provisionToken, type TestContext, type World } from '../support/world.ts';

export interface Org {
  w: World;
  second: number;
  admin: TestPerson;
  adminToken: string;
}

export async function org(ctx: TestContext): Promise<Org> {
  const w = await makeWorld(ctx.db, ctx.clock);
  const second = freshId();
  await applyProvisioning(ctx.db, ctx.clock, { locations: [{ id: second, organization_id: w.organizationId, name: `Store ${second}` }] });
  return {
    w,
    second,
    admin: await makePerson(ctx.db, ctx.clock, w.organizationId),
    adminToken: await provisionToken(ctx.db, ctx.clock, w.organizationId, ['admin']),
  };
}

/** An entry as a change would write it, at a time of the test's choosing. */
export async function entry(ctx: TestContext, o: Org, at: string, e: Partial<AuditEntry> & { action: string }): Promise<void> {
  await writeAudit(
    ctx.db,
    {
      actor: { type: 'service_account', id: '7', name: 'Inventory sync' },
      target: { type: 'call_button', id: 'AA:22:33:44:55:66', name: 'Aisle 4' },
      organizationId: o.w.organizationId,
      locationId: o.w.locationId,
      ...e,
    },
    new Date(at),
  );
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
