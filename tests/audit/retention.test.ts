// Retention of what people leave behind (contract section 17; src/retention): audit entries older
// than AUDIT_RETENTION_DAYS, failed sign-ins a day old and sessions that ended, expired or went idle
// are deleted in the background in small batches; everything newer stays, and live sessions go on.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { writeAudit } from '../../src/audit/record.ts';
import { ManualClock } from '../../src/clock.ts';
import { Retention, type RetentionKind } from '../../src/retention/retention.ts';
import { consoleWorld } from '../console/support.ts';
import { fromPage, signInHttp } from '../support/people.ts';
import { countRows } from '../retention/support.ts';
import { testApp, testConfig } from '../support/world.ts';

const DAY = 86_400_000;

test('audit entries past AUDIT_RETENTION_DAYS, day-old failed sign-ins and dead sessions go, batch after batch; the rest stays', async (t) => {
  const clock = new ManualClock('2026-01-01T08:00:00.000Z');
  const ctx = await testApp({ t, clock, config: testConfig({ AUDIT_RETENTION_DAYS: '30' }) });
  const w = await consoleWorld(ctx.db, clock);
  const org = w.organizationId;
  const entry = (action: string) =>
    writeAudit(
      ctx.db,
      { actor: { type: 'system', id: null, name: 'storeops' }, action, target: null, organizationId: org, locationId: w.locationId },
      clock.now(),
    );
  for (let i = 0; i < 5; i++) await entry('old.entry');
  const subject = `retention-${crypto.randomBytes(4).toString('hex')}`;
  await ctx.db.query("INSERT INTO sign_in_failures (kind, subject, at) VALUES ('pin', $1, $2), ('pin', $1, $2), ('pin', $1, $2)", [subject, clock.now()]);
  clock.set(new Date(clock.now().getTime() + 30 * DAY + 3600_000));
  for (let i = 0; i < 2; i++) await entry('new.entry');
  await ctx.db.query("INSERT INTO sign_in_failures (kind, subject, at) VALUES ('pin', $1, $2)", [subject, new Date(clock.now().getTime() - 3600_000)]);
  // Each sign-in forgets a few dead sessions itself, so the dead ones are made after the last one.
  const live = await signInHttp(ctx.app, w.admin);
  const ended = await signInHttp(ctx.app, w.admin);
  await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(ended) });
  await ctx.db.query(
    `INSERT INTO sessions (session_hash, person_id, method, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, 'password', $3::timestamptz - interval '13 hours', $3::timestamptz - interval '13 hours', $3::timestamptz + interval '5 days')`,
    [crypto.randomBytes(32).toString('hex'), w.admin.id, clock.now()],
  );
  const entries = () => countRows(ctx.db, 'audit_entries WHERE organization_id = $1 AND action = $2', [org, 'old.entry']);
  assert.equal(await entries(), 5);
  const personSessions = () => countRows(ctx.db, 'sessions WHERE person_id = $1', [w.admin.id]);
  assert.ok((await personSessions()) >= 3, 'the ended, the idle and the live');

  const counted: Partial<Record<RetentionKind, number>> = {};
  const retention = new Retention({
    db: ctx.db,
    clock,
    retentionDays: 3650,
    auditRetentionDays: 30,
    batchSize: 2,
    countDeleted: (kind, rows) => {
      counted[kind] = (counted[kind] ?? 0) + rows;
    },
    onError: (err) => {
      throw err;
    },
  });
  const deleted = await retention.runNow();
  assert.equal(await entries(), 0, 'every old entry, in batches of two');
  assert.ok(deleted.audit_entries >= 5 && counted.audit_entries === deleted.audit_entries, JSON.stringify(deleted));
  assert.equal(await countRows(ctx.db, 'audit_entries WHERE organization_id = $1 AND action = $2', [org, 'new.entry']), 2, 'newer entries stay');
  assert.equal(await countRows(ctx.db, 'sign_in_failures WHERE subject = $1', [subject]), 1, 'the failure of the last hour stays');
  assert.ok(deleted.sign_in_failures >= 3);
  assert.equal(await personSessions(), 1, 'only the live session is left');
  assert.ok(deleted.sessions >= 2);
  const state = await ctx.app.inject({ method: 'GET', url: '/api/session', headers: { cookie: live.cookie } });
  assert.equal(state.json().signed_in, true);

  // The service's own retention reads AUDIT_RETENTION_DAYS: a month on, the new entries go too.
  clock.set(new Date(clock.now().getTime() + 31 * DAY));
  await ctx.retention.runNow();
  assert.equal(await countRows(ctx.db, 'audit_entries WHERE organization_id = $1 AND action = $2', [org, 'new.entry']), 0);
});
