// The console in a real browser (Debian's chromium through playwright-core), as a store manager uses
// it: sign in, watch a request created by the API appear and claim it (a second browser sees it
// live), open a cabinet, type an announcement and hear it in the transcript, export a CSV, sign out
// and be refused; a wrong token, an expired session and stored text that looks like HTML.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { freshId, TEST_SECRET, testApp, type Teardown } from '../support/world.ts';
import { consoleWorld, makePerson, type ConsoleWorld, type TestPerson } from './support.ts';

const TABLET = { width: 820, height: 1180 };

async function serving(t: Teardown, clock = new ManualClock(new Date())) {
  const ctx = await testApp({ t, clock });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  return { ...ctx, w, base: `http://127.0.0.1:${port}` };
}

async function signIn(page: Page, base: string, w: ConsoleWorld, person: TestPerson = w.admin): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

async function createRequest(base: string, w: ConsoleWorld, optionId = w.optionId): Promise<string> {
  const res = await fetch(`${base}/api/callforhelp/requests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ location_id: w.locationId, option_id: optionId }),
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { message_id: string }).message_id;
}

test('sign in, a request created by the API appears live in two browsers, one claims it and both see it claimed', { skip }, async (t) => {
  const s = await serving(t);
  const first = await (await browserContext(t, { viewport: TABLET })).newPage();
  const second = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(first, s.base, s.w);
  await signIn(second, s.base, s.w, await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Robin', role: 'staff', locationIds: [s.w.locationId] }));
  await first.getByText('No one is waiting for help.').waitFor();
  await first.locator('#live.on').waitFor();
  await second.locator('#live.on').waitFor();

  const messageId = await createRequest(s.base, s.w);
  const card = (page: Page) => page.locator(`li.request[data-message-id="${messageId}"]`);
  await card(first).waitFor();
  await card(second).waitFor();
  // Its age ticks without a reload (the service's clock stands still: the page adds the time passed).
  const age = card(first).locator('.age');
  const shown = await age.textContent();
  type Doc = { querySelector(selector: string): { textContent: string | null } | null };
  await first.waitForFunction(([selector, before]) => (globalThis as unknown as { document: Doc }).document.querySelector(selector)?.textContent !== before, [
    `li.request[data-message-id="${messageId}"] .age`,
    shown,
  ] as const);
  await card(first).getByRole('button', { name: 'Claim' }).click();
  await card(first).getByText('Claimed by Sam').waitFor();
  await card(second).getByText('Claimed by Sam').waitFor();
  const [row] = await s.db.query<{ claimed_by: string; claimed_from: string }>('SELECT claimed_by, claimed_from FROM cfh_requests WHERE message_id = $1', [
    messageId,
  ]);
  assert.deepEqual(row, { claimed_by: 'Sam', claimed_from: 'web_interface' });

  await card(second).getByRole('button', { name: 'Complete' }).click();
  await second.getByLabel('Outcome').fill('helped');
  await second.getByRole('dialog').getByRole('button', { name: 'Complete' }).click();
  await first.getByRole('cell', { name: 'helped' }).waitFor();
  assert.equal(await card(first).count(), 0);
});

test('open a cabinet after confirming it; the locker gets the command', { skip }, async (t) => {
  const s = await serving(t);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.getByRole('link', { name: 'Lockers' }).click();
  const cabinet = page.locator(`li.cabinet[data-cabinet-id="${s.w.cabinetIds[0]}"]`);
  await cabinet.getByText('door closed').waitFor();
  await cabinet.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  const [before] = await s.db.query<{ state: string }>('SELECT state FROM cabinets WHERE id = $1', [s.w.cabinetIds[0]]);
  assert.equal(before?.state, 'closed', 'cancelled in the dialog: nothing sent');
  await cabinet.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Open', exact: true }).click();
  await cabinet.getByText('door open').waitFor();
  const [after] = await s.db.query<{ state: string }>('SELECT state FROM cabinets WHERE id = $1', [s.w.cabinetIds[0]]);
  assert.equal(after?.state, 'open');
  const [cmd] = await s.db.query<{ command: string; source: string }>('SELECT command, source FROM cabinet_commands WHERE cabinet_id = $1', [
    s.w.cabinetIds[0],
  ]);
  assert.deepEqual(cmd, { command: 'open', source: 'staff' });
});

test('type an announcement and see it in the transcript, with its audio playable', { skip }, async (t) => {
  const s = await serving(t);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.getByRole('link', { name: 'Radio' }).click();
  await page.getByLabel('Announce on Floor radio').fill('Cleanup needed in aisle 5');
  await page.getByRole('button', { name: 'Announce' }).click();
  const item = page.locator('li.transcript', { hasText: 'Cleanup needed in aisle 5' });
  await item.waitFor({ timeout: 60_000 });
  const src = await item.locator('audio').getAttribute('src');
  assert.ok(src !== null);
  const audio = await page.evaluate(async (url) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), riff: new TextDecoder().decode((await res.arrayBuffer()).slice(0, 4)) };
  }, src);
  assert.deepEqual(audio, { status: 200, type: 'audio/wav', riff: 'RIFF' });
});

test('reports show charts and export the range as CSV', { skip }, async (t) => {
  const s = await serving(t);
  await createRequest(s.base, s.w);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.getByRole('link', { name: 'Reports' }).click();
  const day = s.clock.now().toISOString().slice(0, 10);
  await page.getByLabel('From', { exact: true }).fill(day);
  await page.getByLabel('To', { exact: true }).fill(day);
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByRole('img', { name: 'Requests per day' }).waitFor();
  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Export requests (CSV)' }).click();
  const file = await download;
  const path = await file.path();
  const { readFileSync } = await import('node:fs');
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  assert.equal(lines.length, 2, 'a header and the one request of the day');
  assert.match(lines[0] as string, /message_id/);
});

test('sign out: the page asks to sign in again and the old cookie is refused', { skip }, async (t) => {
  const s = await serving(t);
  const context = await browserContext(t, { viewport: TABLET });
  const page = await context.newPage();
  await signIn(page, s.base, s.w);
  const [cookie] = await context.cookies();
  assert.equal(cookie?.httpOnly, true);
  assert.equal(cookie?.sameSite, 'Lax');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  const res = await fetch(`${s.base}/console/api/locations/${s.w.locationId}/queue`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } });
  assert.equal(res.status, 401);
  await page.goto(`${s.base}/console#/lockers/${s.w.locationId}`);
  await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
});

test("another store's page in the URL shows the refusal and nothing of that store", { skip }, async (t) => {
  const s = await serving(t);
  const other = await consoleWorld(s.db, s.clock);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.goto(`${s.base}/console#/lockers/${other.locationId}`);
  await page.getByText('location not found').waitFor();
  assert.equal(await page.locator('li.cabinet').count(), 0);
  assert.equal(await page.locator('#location option').count(), 0, 'only its own store is offered');
});

test('a wrong password is refused on the sign-in page in words a person understands', { skip }, async (t) => {
  const s = await serving(t);
  const page = await (await browserContext(t)).newPage();
  await page.goto(`${s.base}/console`);
  await page.getByLabel('Email').fill(s.w.admin.email);
  await page.getByLabel('Password').fill('not-the-password-at-all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That email and password do not match an account here.').waitFor();
  await page.getByLabel('Password').fill(s.w.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.match((await page.locator('#signed-in-as').textContent()) ?? '', /^Sam · organization admin$/);
});

test('after 12 hours idle the next action finds the session ended and shows sign-in; nothing changes', { skip }, async (t) => {
  const clock = new ManualClock(new Date());
  const s = await serving(t, clock);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.getByRole('link', { name: 'Lockers' }).click();
  const cabinet = page.locator(`li.cabinet[data-cabinet-id="${s.w.cabinetIds[0]}"]`);
  await cabinet.getByText('door closed').waitFor();
  clock.advance(12 * 3600_000 + 1000);
  await cabinet.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
  const [row] = await s.db.query<{ state: string }>('SELECT state FROM cabinets WHERE id = $1', [s.w.cabinetIds[0]]);
  assert.equal(row?.state, 'closed');
});

test('stored text that looks like HTML is shown as text on every page, never run', { skip }, async (t) => {
  const s = await serving(t);
  const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const optionId = freshId();
  await applyProvisioning(s.db, s.clock, {
    cfh_options: [
      { id: optionId, organization_id: s.w.organizationId, location_id: s.w.locationId, text_en: hostile, text_fr: 'x', prompt_en: hostile, prompt_fr: 'x' },
    ],
    lockers: [
      {
        id: s.w.lockerId,
        location_id: s.w.locationId,
        name: hostile,
        version: 2,
        rear_loading_available: true,
        timer: 30,
        api_key: s.w.lockerKey,
        cabinets: s.w.cabinetIds.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' as const })),
      },
    ],
  });
  await createRequest(s.base, s.w, optionId);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w, await makePerson(s.db, s.clock, s.w.organizationId, { name: hostile }));
  await page.locator('li.request', { hasText: hostile }).waitFor();
  await page.getByRole('link', { name: 'Lockers' }).click();
  await page.getByRole('heading', { name: hostile }).waitFor();
  await page.getByRole('link', { name: 'Devices' }).click();
  await page.getByRole('rowheader', { name: hostile }).waitFor();
  assert.equal(await page.evaluate('window.__pwned'), undefined);
  assert.equal(await page.locator('main img').count(), 0);
  assert.equal(await page.locator('main script').count(), 0);
});

test('an occupied cabinet asks for the reason before its rear door opens, and cancelling its order releases it', { skip }, async (t) => {
  const s = await serving(t);
  const cabinetId = s.w.cabinetIds[1] as number;
  const res = await fetch(`${s.base}/api/lockers/orders?secret_token=${encodeURIComponent(TEST_SECRET)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      rearload: false,
      locker_id: s.w.lockerId,
      cabinet_id: cabinetId,
      order_id: 880001,
      organization_id: s.w.organizationId,
      location_id: s.w.locationId,
    }),
  });
  assert.equal(res.status, 201);
  const page = await (await browserContext(t, { viewport: TABLET })).newPage();
  await signIn(page, s.base, s.w);
  await page.getByRole('link', { name: 'Lockers' }).click();
  const cabinet = page.locator(`li.cabinet[data-cabinet-id="${cabinetId}"]`);
  await cabinet.getByText('Order 880001').waitFor();
  await cabinet.getByRole('button', { name: 'Open rear' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Open' }).click();
  assert.equal(await dialog.isVisible(), true, 'no reason given: the dialog stays');
  await dialog.getByLabel('Reason').fill('Restocking from the back');
  await dialog.getByRole('button', { name: 'Open' }).click();
  await cabinet.getByText('rear open').waitFor();
  const [cmd] = await s.db.query<{ door: string; reason: string }>('SELECT door, reason FROM cabinet_commands WHERE cabinet_id = $1', [cabinetId]);
  assert.deepEqual(cmd, { door: 'rear', reason: 'Restocking from the back' });

  await cabinet.getByRole('button', { name: 'Cancel order' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel order' }).click();
  await cabinet.getByText('empty').waitFor();
  const [order] = await s.db.query<{ canceled: boolean }>(
    'SELECT canceled_at IS NOT NULL AS canceled FROM locker_orders WHERE order_id = 880001 AND cabinet_id = $1',
    [cabinetId],
  );
  assert.equal(order?.canceled, true);
});
