// The console's Audit page in a real browser (Debian's chromium through playwright-core): a store
// admin enrolls a tablet from its browser, then reads the entry of that change on the Audit page of
// another browser, as text whatever the stored name holds, newer entries after "Show", and the CSV;
// staff have no Audit page and the audit log's API refuses them.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserContext, skipWithoutChromium as skip } from '../support/browser.ts';
import { testApp, type Teardown } from '../support/world.ts';
import { consoleWorld, makePerson, type TestPerson } from './support.ts';

const DESKTOP = { width: 1280, height: 900 };

async function serving(t: Teardown) {
  const ctx = await testApp({ t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  return { ...ctx, w, base: `http://127.0.0.1:${port}` };
}

async function signIn(page: Page, base: string, person: TestPerson): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A call of the service's API from the page, as the page's own scripts make it (its cookies, its CSRF token). */
function callFromPage(page: Page, method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; text: string; type: string | null }> {
  return page.evaluate(
    async ([method, url, body]) => {
      const session = (await (await fetch('/api/session')).json()) as { csrf_token: string | null };
      const res = await fetch(url, {
        method,
        credentials: 'same-origin',
        headers: method === 'GET' ? {} : { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token ?? '' },
        ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
      });
      return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
    },
    [method, url, body] as const,
  );
}

test('a store admin sees the entry of a change they made on the Audit page, as text, newer ones after Show, and as CSV', { skip }, async (t) => {
  const s = await serving(t);
  const lou = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Lou', role: 'location_admin', locationIds: [s.w.locationId] });
  const tabletName = '<img src=x onerror="document.title=1">Till 2';

  // The tablet: Lou enrolls its browser, which signs Lou out there.
  const tablet = await (await browserContext(t)).newPage();
  await signIn(tablet, s.base, lou);
  const enrolled = await callFromPage(tablet, 'POST', '/api/admin/store_devices', { location_id: s.w.locationId, name: tabletName });
  assert.equal(enrolled.status, 201, enrolled.text);
  const deviceId = (JSON.parse(enrolled.text) as { id: number }).id;

  // The office: Lou reads the store's audit log.
  const office = await (await browserContext(t, { viewport: DESKTOP })).newPage();
  await signIn(office, s.base, lou);
  await office.getByRole('link', { name: 'Audit' }).click();
  await office.getByRole('heading', { name: 'Audit' }).waitFor();
  const row = office.locator('tr', { hasText: 'store_device.enrolled' });
  await row.waitFor();
  const cells = await row.locator('td').allTextContents();
  assert.match(String(await row.locator('td').first().getAttribute('title')), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'the exact time on hover');
  assert.deepEqual(cells.slice(1), [
    'Lou',
    'store_device.enrolled',
    `store device ${tabletName}`,
    `name: — → ${tabletName}; location_id: — → ${s.w.locationId}`,
  ]);
  assert.equal(await office.locator('tr img').count(), 0, 'the stored name is text, never markup');
  assert.notEqual(await office.title(), '1');
  assert.ok(await office.locator('tr', { hasText: 'sign_out' }).count(), 'the sign-out of the enrolling session is there too');

  const revoked = await callFromPage(office, 'POST', `/api/admin/store_devices/${deviceId}/revoke`);
  assert.equal(revoked.status, 200, revoked.text);
  await office.getByLabel('Action').fill('store_device');
  await office.getByRole('button', { name: 'Show' }).click();
  await office.locator('tr', { hasText: 'store_device.revoked' }).waitFor();
  assert.equal(await office.locator('tbody tr').count(), 2, 'only the store_device family');

  const href = await office.locator('#audit-csv').getAttribute('href');
  assert.equal(href, `/api/admin/audit.csv?location_id=${s.w.locationId}&action=store_device`);
  const csv = await callFromPage(office, 'GET', href as string);
  assert.equal(csv.status, 200);
  assert.equal(csv.type, 'text/csv; charset=utf-8');
  const lines = csv.text.trim().split('\r\n');
  assert.equal(lines.length, 3);
  assert.match(lines[1] as string, /"store_device\.revoked"/);
  assert.match(lines[2] as string, /"person","\d+","Lou","store_device\.enrolled","store_device","\d+","<img src=x onerror=""document\.title=1"">Till 2"/);
});

test('staff have no Audit page, and the audit log answers them 403', { skip }, async (t) => {
  const s = await serving(t);
  const robin = await makePerson(s.db, s.clock, s.w.organizationId, { name: 'Robin', role: 'staff', locationIds: [s.w.locationId] });
  const page = await (await browserContext(t, { viewport: DESKTOP })).newPage();
  await signIn(page, s.base, robin);
  await page.getByRole('link', { name: 'Call for Help' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Audit' }).count(), 0);
  await page.goto(`${s.base}/console#/audit/${s.w.locationId}`);
  await page.waitForURL(`**/console#/queue/${s.w.locationId}`);
  assert.equal(await page.getByRole('heading', { name: 'Audit' }).count(), 0);
  for (const url of [`/api/admin/audit?location_id=${s.w.locationId}`, '/api/admin/audit', `/api/admin/audit.csv?location_id=${s.w.locationId}`]) {
    const res = await callFromPage(page, 'GET', url);
    assert.equal(res.status, 403, url);
    assert.equal((JSON.parse(res.text) as { code: string }).code, 'forbidden');
  }
});
