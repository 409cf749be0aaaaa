// How long a console session lives (contract section 15: 12 hours idle), where "idle" means nobody
// did anything: an open tablet whose page reads itself again on every live change, or polls, does
// not keep its session alive; a person's request does, writing the session's last-seen time at most
// once a minute; and the session's live stream ends with the session (sign-out, idle expiry).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { sha256hex } from '../../src/http/secrets.ts';
import { openSse } from '../support/sse.ts';
import { testApp } from '../support/world.ts';
import { consoleWorld, fromPage, makePerson, signInHttp, type Signed } from './support.ts';

const AUTOMATIC = { 'x-console-refresh': 'auto' };

async function lastSeen(ctx: Awaited<ReturnType<typeof testApp>>, s: Signed): Promise<number> {
  const [row] = await ctx.db.query<{ last_seen_at: Date }>('SELECT last_seen_at FROM sessions WHERE session_hash = $1', [
    sha256hex(s.cookie.split('=')[1] as string),
  ]);
  assert.ok(row !== undefined);
  return new Date(row.last_seen_at).getTime();
}

test("a page's own reads (live changes, polls) keep showing the session but do not keep it alive", async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.admin);
  const read = (headers: Record<string, string>) =>
    ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/queue`, headers: { cookie: s.cookie, ...headers } });
  for (let hour = 0; hour < 11; hour++) {
    clock.advance(3600_000);
    assert.equal((await read(AUTOMATIC)).statusCode, 200);
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: s.cookie, ...AUTOMATIC } })).json().signed_in, true);
  }
  clock.advance(3600_000 + 1000);
  const ended = await read(AUTOMATIC);
  assert.equal(ended.statusCode, 401, '12 hours without anything a person did');
  assert.equal(ended.json().code, 'unauthorized');
  assert.equal((await read({})).statusCode, 401, 'and a person coming back finds it ended');
});

test("a person's request restarts the idle time, writing the last-seen time at most once a minute", async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.admin);
  const read = () => ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/devices`, headers: { cookie: s.cookie } });
  const signedAt = await lastSeen(ctx, s);
  clock.advance(30_000);
  assert.equal((await read()).statusCode, 200);
  assert.equal(await lastSeen(ctx, s), signedAt, 'seen 30 s ago: not written again');
  clock.advance(31_000);
  assert.equal((await read()).statusCode, 200);
  assert.equal(await lastSeen(ctx, s), clock.now().getTime(), 'over a minute: written');
  clock.advance(90_000);
  assert.equal(
    (await ctx.app.inject({ method: 'GET', url: `/console/api/locations/${w.locationId}/devices`, headers: { cookie: s.cookie, ...AUTOMATIC } })).statusCode,
    200,
  );
  assert.equal(await lastSeen(ctx, s), clock.now().getTime() - 90_000, 'an automatic read writes nothing');
  // An action (a person's) with CSRF counts too.
  const action = await ctx.app.inject({ method: 'POST', url: `/console/api/cabinets/${w.cabinetIds[0]}/disable`, headers: fromPage(s), payload: {} });
  assert.equal(action.statusCode, 200, action.body);
  assert.equal(await lastSeen(ctx, s), clock.now().getTime());
});

test("signing out ends the session's live stream at once", async (t) => {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  const s = await signInHttp(ctx.app, w.admin);
  const other = await signInHttp(ctx.app, await makePerson(ctx.db, ctx.clock, w.organizationId, { name: 'Kim' }));
  const url = `http://127.0.0.1:${port}/console/api/locations/${w.locationId}/stream`;
  const mine = await openSse(t, url, { cookie: s.cookie });
  const theirs = await openSse(t, url, { cookie: other.cookie });
  await mine.next('ready');
  await theirs.next('ready');
  const out = await ctx.app.inject({ method: 'POST', url: '/api/session/end', headers: fromPage(s) });
  assert.equal(out.statusCode, 200);
  await mine.ended;
  assert.equal(ctx.live.size, 1, "another session's stream stays open");
  const again = await fetch(url, { headers: { cookie: s.cookie } });
  assert.equal(again.status, 401, 'and it cannot be opened again');
  await again.body?.cancel();
});

test('a stream ends once its session went idle (or ended on another instance), at the next change it would have sent', async (t) => {
  const clock = new ManualClock(new Date());
  const ctx = await testApp({ t, clock });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, clock);
  const s = await signInHttp(ctx.app, w.admin);
  const stream = await openSse(t, `http://127.0.0.1:${port}/console/api/locations/${w.locationId}/stream`, { cookie: s.cookie });
  await stream.next('ready');
  clock.advance(12 * 3600_000 + 1000);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/callforhelp/requests',
    headers: { authorization: `Bearer ${w.token}` },
    payload: { location_id: w.locationId, option_id: w.optionId },
  });
  assert.equal(created.statusCode, 201);
  await ctx.feed.readNow();
  await stream.ended;
  await assert.rejects(stream.next('change', 200), 'no change was sent to an ended session');
  assert.equal(ctx.live.size, 0);
});
