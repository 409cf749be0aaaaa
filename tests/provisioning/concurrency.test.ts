// Provisioning runs at every start (PROVISION_FILE), so with several instances it runs while the
// others serve orders on the very lockers and cabinets the file names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, testDb, testDatabaseUrl } from '../support/world.ts';

test('applying an unchanged file while an order holds a cabinet neither waits for it nor deadlocks with it', async () => {
  const db = await testDb();
  const clock = new ManualClock();
  const [org, loc, locker, cabinet] = [freshId(), freshId(), freshId(), freshId()];
  const file = {
    organizations: [{ id: org, name: 'Acme' }],
    locations: [{ id: loc, organization_id: org, name: 'Store' }],
    lockers: [{ id: locker, location_id: loc, name: 'Front', api_key: `locker-key-${locker}-abcdefgh`, cabinets: [{ id: cabinet, key: 1 }] }],
  };
  await applyProvisioning(db, clock, file);

  // An order being made, as L2 does it: the cabinet locked first, then the order row, whose
  // foreign key needs a share lock on the locker.
  const order = new pg.Client({ connectionString: await testDatabaseUrl() });
  await order.connect();
  try {
    await order.query('BEGIN');
    await order.query('SELECT 1 FROM cabinets WHERE id = $1 FOR UPDATE', [cabinet]);
    let settled = false;
    const applying = applyProvisioning(db, clock, file)
      .then(
        () => 'applied',
        (err: unknown) => String(err),
      )
      .finally(() => (settled = true));
    // Give it every chance to take locks before the order goes on (bounded: it never settles if it waits).
    for (let i = 0; i < 20 && !settled; i++) await new Promise((r) => setTimeout(r, 25));
    await order.query(
      `INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload, created_at, updated_at)
       VALUES (1, $1, $2, $3, $4, $5, false, now(), now())`,
      [cabinet, locker, org, loc, `code-${cabinet}`],
    );
    await order.query('COMMIT');
    assert.equal(settled, true, 'the provisioning did not wait for the order');
    assert.equal(await applying, 'applied');
  } finally {
    await order.end();
  }
});
