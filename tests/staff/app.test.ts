// The staff app on phones (contract section 19), in Chromium emulating a 390x844 touch phone: PIN
// sign-in on the store's handheld, a button press live within a second, a claim that leaves the
// other phone's waiting list at once, completing with an outcome, offline and back, one request by
// its link, and switch user.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refuseLiveStreams, skipWithoutChromium as skip } from '../support/browser.ts';
import { fromPage, signInHttp } from '../support/people.ts';
import { phone, press, request, screenshot, signInWithPassword, signInWithPin, staffWorld } from './support.ts';

const card = (id: string) => `li.request[data-message-id="${id}"]`;

// How fast a press reaches every phone is the benchmark's to measure (npm run bench:staff: p99 under
// 1 s for 500 phones); here, that it comes by the live stream, with no reload and no polling.
test('on the enrolled handheld an associate signs in with a PIN; a button press appears live, without a reload', { skip }, async (t) => {
  const w = await staffWorld(t);
  const { page } = await phone(t, w, { handheld: true });
  await page.goto(`${w.base}/staff`);
  await page.getByRole('heading', { name: `Sign in at Store ${w.locationId}` }).waitFor();
  await screenshot(page, 'sign-in');
  await signInWithPin(page, w.ann);
  await page.locator('#who', { hasText: 'Ann Lee' }).waitFor();
  await page.getByRole('button', { name: 'Switch user' }).waitFor();
  await page.locator('body.live').waitFor();
  let navigations = 0;
  page.on('framenavigated', () => navigations++);

  const reads: string[] = [];
  page.on('request', (r) => r.url().includes('/console/api/') && !r.url().endsWith('/stream') && reads.push(r.url()));
  const messageId = await press(w);
  await page.locator(`#waiting ${card(messageId)}`).waitFor({ timeout: 5000 });
  assert.equal(navigations, 0, 'no reload');
  assert.equal(await page.locator('body.live').count(), 1, 'the stream stayed live');
  assert.ok(reads.length <= 2, `the change was read once it was heard, not polled for: ${reads.join(', ')}`);
  const shown = page.locator(card(messageId));
  assert.match(await shown.innerText(), /Help[\s\S]*Paint counter[\s\S]*waiting \d+ s/);
  await screenshot(page, 'queue');

  // Switch user: back to the sign-in page of the same handheld, nobody's name left.
  await page.getByRole('button', { name: 'Switch user' }).click();
  await page.getByRole('button', { name: 'Sign in with PIN' }).waitFor();
  assert.equal(await page.locator('#who').count(), 0);
});

test('a claim on one phone takes the request off the other phone’s waiting list at once, saying who has it; complete with an outcome', { skip }, async (t) => {
  const w = await staffWorld(t);
  const a = await phone(t, w, { handheld: true });
  const b = await phone(t, w);
  await a.page.goto(`${w.base}/staff`);
  await signInWithPin(a.page, w.ann);
  await b.page.goto(`${w.base}/staff`);
  await signInWithPassword(b.page, w.bob);
  await a.page.locator('body.live').waitFor();
  await b.page.locator('body.live').waitFor();
  const messageId = await request(w);
  await a.page.locator(`#waiting ${card(messageId)}`).waitFor();
  await b.page.locator(`#waiting ${card(messageId)}`).waitFor();

  await a.page.locator(card(messageId)).getByRole('button', { name: 'Claim' }).tap();
  await b.page.locator(`#in-progress ${card(messageId)}`, { hasText: 'Claimed by Ann Lee' }).waitFor({ timeout: 5000 });
  assert.equal(await b.page.locator(`#waiting ${card(messageId)}`).count(), 0, 'gone from the waiting list');
  assert.equal(await b.page.locator(card(messageId)).getByRole('button').count(), 0, 'nothing to do on it');

  // Ann's "My requests" has it; she is on the way, then completes it with an outcome.
  await a.page.getByRole('link', { name: /My requests \(1\)/ }).tap();
  await a.page
    .locator(`#mine ${card(messageId)}`)
    .getByRole('button', { name: 'On the way' })
    .tap();
  await a.page.locator(`#mine ${card(messageId)}`, { hasText: 'You are on the way' }).waitFor();
  await screenshot(a.page, 'mine');
  await a.page.locator(card(messageId)).getByRole('button', { name: 'Complete' }).tap();
  await a.page.getByLabel('Outcome').selectOption('out_of_stock');
  await screenshot(a.page, 'complete');
  await a.page.locator('[data-step=confirm-complete]').tap();
  await a.page.getByText('Completed.').waitFor();
  await b.page.locator(card(messageId)).waitFor({ state: 'detached' });
  const status = await w.ctx.app.inject({
    method: 'GET',
    url: `/api/callforhelp/v1/tracking?message_id=${messageId}`,
    headers: { authorization: `Bearer ${w.token}` },
  });
  const record = status.json<{ cfh_request: { status: string; claimed_by: string } }>().cfh_request;
  assert.equal(record.status, 'completed');
  assert.equal(record.claimed_by, 'Ann Lee');
  const [row] = await w.ctx.db.query<{ completion_reason: string; claimed_by_user_id: string }>(
    'SELECT completion_reason, claimed_by_user_id FROM cfh_requests WHERE message_id = $1',
    [messageId],
  );
  assert.deepEqual(row, { completion_reason: 'out_of_stock', claimed_by_user_id: `person:${w.ann.id}` });
});

test('offline the app says so and disables every action; back online its stream resumes and shows what came meanwhile', { skip }, async (t) => {
  const w = await staffWorld(t);
  const { context, page } = await phone(t, w, { handheld: true });
  await page.goto(`${w.base}/staff`);
  await signInWithPin(page, w.ann);
  await page.locator('body.live').waitFor();
  const first = await request(w);
  await page.locator(card(first)).getByRole('button', { name: 'Claim' }).waitFor();

  await context.setOffline(true);
  await page.locator('#offline', { hasText: 'Offline' }).waitFor();
  assert.equal(await page.locator(card(first)).getByRole('button', { name: 'Claim' }).isDisabled(), true);
  await screenshot(page, 'offline');
  const meanwhile = await request(w);
  await page.waitForTimeout(500);
  assert.equal(await page.locator(card(meanwhile)).count(), 0, 'nothing arrives offline');

  await context.setOffline(false);
  await page.locator('#offline').waitFor({ state: 'hidden' });
  await page.locator(card(meanwhile)).waitFor({ timeout: 5000 });
  await page.locator('body.live').waitFor();
  assert.equal(await page.locator(card(first)).getByRole('button', { name: 'Claim' }).isDisabled(), false);
  const later = await request(w);
  await page.locator(card(later)).waitFor({ timeout: 5000 });
  // Nothing was queued while offline: the first request is still unclaimed.
  const [row] = await w.ctx.db.query<{ is_claimed: boolean }>('SELECT is_claimed FROM cfh_requests WHERE message_id = $1', [first]);
  assert.equal(row?.is_claimed, false);
});

test('a phone whose stream is refused (429) keeps its queue moving by reading it again', { skip }, async (t) => {
  const w = await staffWorld(t);
  const { page } = await phone(t, w, { handheld: true });
  const refused = await refuseLiveStreams(page);
  await page.goto(`${w.base}/staff`);
  await signInWithPin(page, w.ann);
  await page.locator('main p.empty').waitFor(); // the list was read once, before the request
  await page.waitForTimeout(500);
  const meanwhile = await request(w);
  await page.locator(card(meanwhile)).waitFor({ timeout: 15_000 });
  assert.equal(await page.locator('body.live').count(), 0, 'the app does not claim to be live');
  assert.ok(refused() >= 1 && refused() <= 4, `the stream was refused, and not asked for again at once (${refused()} tries)`);
});

test('a chat card’s link /staff/r/{message_id} signs in first, then opens that request', { skip }, async (t) => {
  const w = await staffWorld(t);
  const messageId = await request(w);
  const { page } = await phone(t, w);
  await page.goto(`${w.base}/staff/r/${messageId}`);
  await signInWithPassword(page, w.bob);
  await page
    .locator(`#request ${card(messageId)}`)
    .getByRole('button', { name: 'Claim' })
    .tap();
  await page.locator(`#request ${card(messageId)}`, { hasText: 'Claimed by you' }).waitFor();
  assert.equal(new URL(page.url()).pathname, `/staff/r/${messageId}`);
});

test('a store whose language is French shows the app in French', { skip }, async (t) => {
  const w = await staffWorld(t, { language: 'fr' });
  const messageId = await request(w);
  const { page } = await phone(t, w, { handheld: true });
  await page.goto(`${w.base}/staff`);
  await page.getByRole('heading', { name: `Connexion à Store ${w.locationId}` }).waitFor();
  await page.locator('#pin-email').fill(w.ann.email);
  await page.locator('#pin').fill('246810');
  await page.getByRole('button', { name: 'Connexion par NIP' }).click();
  await page.locator(card(messageId)).getByRole('button', { name: 'Prendre' }).waitFor();
  assert.match(await page.locator(card(messageId)).innerText(), /Aide[\s\S]*attend depuis/);
  assert.equal(await page.getByRole('button', { name: 'Changer d’utilisateur' }).count(), 1);
});

test('a handheld revoked mid-shift goes to sign-in at once, saying the device is no longer enrolled', { skip }, async (t) => {
  const w = await staffWorld(t);
  const { page } = await phone(t, w, { handheld: true });
  await page.goto(`${w.base}/staff`);
  await signInWithPin(page, w.ann);
  await page.locator('body.live').waitFor();
  const admin = await signInHttp(w.ctx.app, w.admin);
  const [device] = await w.ctx.db.query<{ id: number }>('SELECT id FROM store_devices WHERE location_id = $1', [w.locationId]);
  const revoked = await w.ctx.app.inject({ method: 'POST', url: `/api/admin/store_devices/${device?.id}/revoke`, headers: fromPage(admin), payload: {} });
  assert.equal(revoked.statusCode, 200, revoked.body);
  await request(w); // the stream's next batch finds the session ended
  await page.getByText('This device is no longer enrolled for the store. Ask an administrator.').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('#who').count(), 0, 'nobody is shown signed in');
});
