// The locker command message is built in SQL by the statement that carries a command out and sends
// it (L3, L5 agree, the delayed close): what a locker receives is the contract's message, field by
// field, for every command and door.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { sql } from '../../src/db/sql.ts';
import { lockerCommandMessageSql, lockerCommandTopicSql, type LockerCommandMessage } from '../../src/devices/wire.ts';
import { testApp, type TestContext } from '../support/world.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

const commands: LockerCommandMessage['command'][] = ['open', 'close', 'resize', 'set_thermal_mode', 'disable', 'enable'];

test('the command a statement sends is the contract message: its fields, the size only for resize, the mode only for set_thermal_mode', async () => {
  for (const command of commands) {
    for (const door of ['front', 'rear'] as const) {
      const commandId = '6f1c0a52-2f3e-4b53-9a38-4f1f3c1b7e10';
      const issuedAt = '2026-05-01T10:00:00.123456Z';
      const message = lockerCommandMessageSql(sql`c`, {
        commandId: sql`${commandId}`,
        command: sql`${command}`,
        door: sql`${door}`,
        issuedAt: sql`${issuedAt}`,
      });
      const [row] = await ctx.db.run<{ topic: string; payload: unknown }>(
        sql`SELECT ${lockerCommandTopicSql(sql`c.locker_id`)} AS topic, ${message} AS payload
         FROM (VALUES (4021, 7, 'large', 'chilled', 310)) AS c(id, key, size, thermal_mode, locker_id)`,
      );
      const expected: LockerCommandMessage = {
        command_id: commandId,
        cabinet_key: 7,
        cabinet_id: 4021,
        command,
        door,
        issued_at: issuedAt,
        ...(command === 'resize' ? { size: 'large' } : {}),
        ...(command === 'set_thermal_mode' ? { thermal_mode: 'chilled' } : {}),
      };
      assert.deepEqual(row?.payload, expected, `${command} ${door}`);
      assert.equal(row?.topic, 'lockers/310/commands');
    }
  }
});
