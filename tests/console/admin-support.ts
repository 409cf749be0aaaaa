// The Setup pages' browser tests: a listening service with an org_admin, signing in on the page,
// opening a Setup tab, and calls of the API made from the page as its own scripts make them.
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { browserContext } from '../support/browser.ts';
import { testApp, type Teardown, type TestAppOptions } from '../support/world.ts';
import { consoleWorld, type TestPerson } from './support.ts';

export const DESKTOP = { width: 1280, height: 900 };

export async function serving(t: Teardown, opts: Omit<TestAppOptions, 't'> = {}) {
  const ctx = await testApp({ ...opts, t });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const w = await consoleWorld(ctx.db, ctx.clock);
  return { ...ctx, w, base: `http://127.0.0.1:${port}` };
}

/** A new page of its own browser context, signed in as the person. */
export async function signedInPage(t: Teardown, base: string, person: Pick<TestPerson, 'email' | 'password'>, viewport = DESKTOP): Promise<Page> {
  const page = await (await browserContext(t, { viewport })).newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return page;
}

/** Opens Setup's tab (its link in the Setup tabs) at the store. */
export async function openSetup(page: Page, base: string, locationId: number, part: string, heading: string): Promise<void> {
  await page.goto(`${base}/console#/setup/${locationId}/${part}`);
  await page.getByRole('heading', { name: heading, exact: true }).waitFor();
}

/** A call of the service's API from the page, with its cookie and CSRF token, as its scripts make it. */
export function callFromPage(
  page: Page,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: () => unknown }> {
  return page
    .evaluate(
      async ([method, url, body, headers]) => {
        const session = (await (await fetch('/api/session')).json()) as { csrf_token: string | null };
        const res = await fetch(url, {
          method,
          credentials: 'same-origin',
          headers: method === 'GET' ? headers : { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token ?? '', ...headers },
          ...(method === 'GET' || body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, text: await res.text() };
      },
      [method, url, body, headers] as const,
    )
    .then((r) => ({ ...r, json: () => JSON.parse(r.text) }));
}
