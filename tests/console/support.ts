// The console tests' fixtures: a world with an org_admin, signing in over HTTP (inject) or on the
// page, and the session's cookie and CSRF token.
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import type { Page } from 'playwright-core';
import { makeWorld, type World } from '../support/world.ts';
import { makePerson, type TestPerson } from '../support/people.ts';

export { fromPage, makePerson, signInHttp, type Signed, type TestPerson } from '../support/people.ts';

export interface ConsoleWorld extends World {
  /** An org_admin named Sam, with a password. */
  admin: TestPerson;
}

export async function consoleWorld(db: Db, clock: Clock, opts: Parameters<typeof makeWorld>[2] = {}): Promise<ConsoleWorld> {
  const world = await makeWorld(db, clock, { voiceHandlers: ['transcript'], ...opts });
  return { ...world, admin: await makePerson(db, clock, world.organizationId) };
}

/** Signs in on the console's page (email and password), in a browser. */
export async function signInPage(page: Page, person: Pick<TestPerson, 'email' | 'password'>): Promise<void> {
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
