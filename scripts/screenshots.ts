// `npm run screenshots`: the console's pages as pictures for the README (docs/screenshots/*.png).
// Starts the service on an embedded database in a temporary directory, provisions a demo store,
// makes a morning's activity through the public API (requests, claims, lockers, announcements,
// webhook attempts), signs in with Debian's chromium and photographs each page at a tablet's width.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import mqtt from 'mqtt';
import { chromium } from 'playwright-core';
import { ManualClock } from '../src/clock.ts';
import { compose } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { hashSecret } from '../src/people/passwords.ts';

const OUT = path.resolve(import.meta.dirname, '..', 'docs', 'screenshots');
const CHROMIUM = '/usr/bin/chromium';
const SECRET = 'screenshots-secret-token-0123456789';
const TOKEN = 'screenshots-api-token-0123456789abc';
const MANAGER = { email: 'alex@example.com', password: 'screenshots-password-0123456789' };
const EDGE_KEY = 'screenshots-edge-key-0123456789abcd';
const LOCKER_KEY = 'screenshots-locker-key-0123456789ab';
const HUB = 'screenshots-hub-token-0123456789abcdef';

const provision = {
  organizations: [{ id: 1, name: 'Acme Grocery' }],
  locations: [{ id: 10, organization_id: 1, name: 'Main Street store', store_number: '010', cfh_escalation_seconds: 120, cfh_timeout_seconds: 3600 }],
  cfh_outcomes: [
    ['helped', 'Customer helped'],
    ['product_found', 'Product found'],
    ['out_of_stock', 'Out of stock'],
    ['customer_left', 'Customer had left'],
  ].map(([key, text], i) => ({ id: 90 + i, location_id: 10, key: key as string, text_en: text as string, text_fr: text as string })),
  call_buttons: [
    ['Paint counter button', 50],
    ['Garden centre button', 51],
    ['Fitting rooms button', 52],
  ].map(([name, option], i) => ({ id: 30 + i, location_id: 10, name: name as string, device_key: `AA:BB:CC:00:00:0${i + 1}`, option_id: option as number })),
  lockers: [
    {
      id: 100,
      location_id: 10,
      name: 'Front lockers',
      version: 2,
      rear_loading_available: true,
      timer: 30,
      api_key: LOCKER_KEY,
      cabinets: [1, 2, 3, 4, 5, 6].map((key) => ({
        id: 1000 + key,
        key,
        size: key <= 2 ? 'small' : key <= 4 ? 'medium' : 'large',
        thermal_mode: key === 6 ? ('chill' as const) : ('ambient' as const),
      })),
    },
  ],
  cfh_options: [
    ['Paint counter', 'Someone is coming to the paint counter'],
    ['Garden centre', 'Help is on its way to the garden centre'],
    ['Fitting rooms', 'An associate is coming'],
    ['Key cutting', 'Someone will be right with you'],
  ].map(([text, prompt], i) => ({
    id: 50 + i,
    organization_id: 1,
    location_id: 10,
    text_en: text as string,
    text_fr: text as string,
    prompt_en: prompt as string,
    prompt_fr: prompt as string,
  })),
  radio_edges: [
    { edge_id: 'store10-radio', location_id: 10, name: 'Floor radio', device_key: EDGE_KEY, voice_handlers: ['chime' as const, 'transcript' as const] },
  ],
  webhooks: [
    {
      id: 1,
      organization_id: 1,
      url: 'http://127.0.0.1:9/store-events',
      secret: 'screenshots-webhook-secret-0123456789',
      events: ['callforhelp' as const, 'locker' as const],
    },
  ],
  people: [{ email: MANAGER.email, name: 'Alex', organization_id: 1, memberships: [{ role: 'org_admin' as const }] }],
  api_tokens: [
    { name: 'integration', organization_id: 1, scopes: ['cfh' as const, 'radio' as const], token: TOKEN },
    { name: 'hub', organization_id: 1, scopes: ['buttons' as const], token: HUB },
  ],
};

async function main(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`screenshots need chromium at ${CHROMIUM} (apt-get install chromium)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-screenshots-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  fs.writeFileSync(path.join(dir, 'provision.json'), JSON.stringify(provision));
  const config = loadConfig({
    DATA_DIR: path.join(dir, 'data'),
    PROVISION_FILE: path.join(dir, 'provision.json'),
    SECRET_TOKEN: SECRET,
    PORT: '0',
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  // A week of activity in a few seconds: the service's clock is moved between the steps.
  const clock = new ManualClock(new Date(Date.now() - 6 * 86_400_000));
  const service = await compose({ config, clock });
  // The store manager's password, as they would have chosen it after their one-time password.
  await service.db.query('UPDATE people SET password_hash = $2 WHERE lower(email) = $1', [MANAGER.email, await hashSecret(MANAGER.password)]);
  await service.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
  try {
    await activity(base, clock, service.devices.deviceUrl);
    fs.mkdirSync(OUT, { recursive: true });
    await photograph(base);
  } finally {
    await service.app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function call(base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

async function activity(base: string, clock: ManualClock, mqttUrl: string | null): Promise<void> {
  const bearer = { authorization: `Bearer ${TOKEN}` };
  const request = async (option: number) =>
    ((await call(base, 'POST', '/api/callforhelp/requests', { location_id: 10, option_id: option }, bearer)) as { message_id: string }).message_id;
  const staff = (messageId: string, name: string) => ({
    message_id: messageId,
    claimed_by: name,
    claimed_by_user_id: name.toLowerCase(),
    channel_id: 'floor',
    request_from: 'provider_a',
  });
  const press = async (button: number, voltage?: number) => {
    const res = await fetch(`${base}/api/callbutton/press`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HUB}`, 'content-type': 'application/json' },
      body: JSON.stringify({ device_key: `AA:BB:CC:00:00:0${button}`, ...(voltage === undefined ? {} : { voltage }) }),
    });
    if (!res.ok) throw new Error(`press: ${res.status} ${await res.text()}`);
    return (await res.text()).trim();
  };
  const people = ['Sam', 'Robin', 'Kim', 'Alex'];
  const outcomes = ['helped', 'helped', 'product_found', 'out_of_stock', 'helped', 'customer_left'];
  const end = Date.now();
  let n = 0;
  for (let day = 6; day >= 0; day--) {
    clock.set(new Date(end - day * 86_400_000 - 5 * 3600_000));
    for (let i = 0; i < 3 + ((day * 5) % 6); i++, n++) {
      const id = n % 3 === 0 ? await press(1 + (n % 2)) : await request(50 + ((n * 7) % 4));
      const who = people[(n * 3) % 4] as string;
      clock.advance(20_000 + ((n * 37) % 9) * 15_000);
      await call(base, 'POST', '/api/callforhelp/claim', staff(id, who), bearer);
      clock.advance(60_000 + ((n * 53) % 7) * 40_000);
      await call(base, 'POST', '/api/callforhelp/complete', { ...staff(id, who), customer_status: outcomes[n % outcomes.length] }, bearer);
      clock.advance(25 * 60_000); // past the buttons' cooldown
    }
  }
  clock.set(new Date(end - 6 * 60_000));
  await press(3, 2.31); // a button whose battery runs low; unclaimed, it escalates
  const claimed = await request(51);
  clock.advance(50_000);
  await call(base, 'POST', '/api/callforhelp/claim', staff(claimed, 'Robin'), bearer);
  clock.advance(90_000);
  await request(50);
  clock.advance(75_000);
  await request(53);
  clock.set(new Date(end));
  await new Promise((r) => setTimeout(r, 1500)); // the scheduler escalates what waited too long
  await call(
    base,
    'POST',
    '/api/lockers/cabinet/status',
    { cabinets: [1, 2, 3, 4, 5, 6].map((key) => ({ key, front_status: 'closed' })), locker_info: { ip: '10.0.0.21', firmware: '2.4.1' } },
    { 'api-key': LOCKER_KEY },
  );
  for (const [cabinet, order] of [
    [1002, 71001],
    [1004, 71002],
  ] as const) {
    await call(base, 'POST', `/api/lockers/orders?secret_token=${SECRET}`, {
      rearload: false,
      locker_id: 100,
      cabinet_id: cabinet,
      order_id: order,
      organization_id: 1,
      location_id: 10,
    });
  }
  await call(base, 'PUT', `/api/lockers/cabinets/1006?secret_token=${SECRET}`, { command: 'disable', reason: 'Door sticks' });
  for (const text of ['Cleanup needed in aisle 5', 'The store closes in 15 minutes']) {
    await call(base, 'POST', '/webhooks/incoming/generic', { edgeId: 'store10-radio', text, actor: 'Manager', process: true }, bearer);
  }
  if (mqttUrl !== null) {
    // The radio edge hears staff on the air (radio/<edge_id>/heard): the radio page shows it beside what was played.
    const edge = await mqtt.connectAsync(mqttUrl, { username: 'edge:store10-radio', password: EDGE_KEY, clientId: 'store10-radio' });
    await edge.publishAsync(
      'radio/store10-radio/heard',
      JSON.stringify({ heard_id: crypto.randomUUID(), text: 'Can someone cover register two?', speaker: 'Kim', heard_at: clock.now().toISOString() }),
      { qos: 1 },
    );
    await edge.endAsync();
  }
  await new Promise((r) => setTimeout(r, 3000)); // webhook attempts to the closed port fail and are logged
}

async function photograph(base: string): Promise<void> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
  try {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.goto(`${base}/console`);
    await page.screenshot({ path: path.join(OUT, 'sign-in.png') });
    await page.getByLabel('Email').fill(MANAGER.email);
    await page.getByLabel('Password').fill(MANAGER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('li.request').first().waitFor();
    const pages: [string, string, string][] = [
      ['queue', 'li.request', 'queue.png'],
      ['lockers', 'li.cabinet', 'lockers.png'],
      ['radio', 'li.transcript', 'radio.png'],
      ['devices', 'table', 'devices.png'],
      ['reports', 'svg.chart', 'reports.png'],
      ['webhooks', 'section.endpoint', 'webhooks.png'],
    ];
    for (const [id, ready, file] of pages) {
      await page.goto(`${base}/console#/${id}/10`);
      await page.locator(ready).first().waitFor();
      await page.locator('#live.on').waitFor();
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(OUT, file), fullPage: true });
      console.log(`docs/screenshots/${file}`);
    }
  } finally {
    await browser.close();
  }
}

await main();
