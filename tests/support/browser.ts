// A real browser for the page tests: Debian's chromium driven by playwright-core (never a browser
// downloaded at run time; `.ci/run` installs chromium when it is missing). One browser per test
// file, closed at its end; each test takes its own context (cookies, storage) from it.
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { closeAtEnd, closeWith, type Teardown } from './teardown.ts';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

let shared: Promise<Browser> | null = null;

/** Whether this machine has the browser (the browser tests skip with a reason when it has not). */
export const hasChromium = fs.existsSync(CHROMIUM_PATH);
/** A browser test's skip option: skipped, saying why, where Chromium is missing. */
export const skipWithoutChromium = hasChromium ? false : `chromium is not installed (${CHROMIUM_PATH}); .ci/run installs it`;

/** The file's browser, launched on first use. */
export function testBrowser(): Promise<Browser> {
  if (shared === null) {
    shared = chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true });
    const launched = shared;
    closeAtEnd(async () => (await launched).close());
  }
  return shared;
}

/** A fresh browser context (its own cookies), closed with the test. */
export async function browserContext(t: Teardown, opts: { viewport?: { width: number; height: number }; locale?: string } = {}): Promise<BrowserContext> {
  const browser = await testBrowser();
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 412, height: 860 }, locale: opts.locale ?? 'en-US' });
  closeWith(t, () => context.close());
  return context;
}

/** Answers every request of the page for the store's live stream as the service at its limit does
 * (429 too_many_streams); returns how many were asked for so far. */
export async function refuseLiveStreams(page: Page): Promise<() => number> {
  let refused = 0;
  await page.route('**/console/api/locations/*/stream', (route) => {
    refused++;
    return route.fulfill({
      status: 429,
      headers: { 'retry-after': '30' },
      contentType: 'application/json',
      body: JSON.stringify({ code: 'too_many_streams', message: 'too many open streams; close one or retry later' }),
    });
  });
  return () => refused;
}
