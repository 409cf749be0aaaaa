// The console tests' fixtures: a world with a console token, signing in over HTTP (inject) and the
// session's cookie and CSRF token.
import assert from 'node:assert/strict';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import type { App } from '../../src/app.ts';
import { makeWorld, provisionToken, type World } from '../support/world.ts';

export interface ConsoleWorld extends World {
  consoleToken: string;
}

export async function consoleWorld(db: Db, clock: Clock, opts: Parameters<typeof makeWorld>[2] = {}): Promise<ConsoleWorld> {
  const world = await makeWorld(db, clock, { voiceHandlers: ['transcript'], ...opts });
  return { ...world, consoleToken: await provisionToken(db, clock, world.organizationId, ['console']) };
}

export interface Signed {
  cookie: string;
  setCookie: string;
  csrf: string;
}

/** Signs in over HTTP as the console's page does; the session's cookie and CSRF token. */
export async function signInHttp(app: App, token: string, name = 'Sam'): Promise<Signed> {
  const res = await app.inject({ method: 'POST', url: '/console/api/session', payload: { token, name } });
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  const state = await app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } });
  return { cookie, setCookie, csrf: state.json<{ csrf_token: string }>().csrf_token };
}

/** Headers of a state-changing call from the console's own page. */
export const fromPage = (s: Signed) => ({ cookie: s.cookie, 'x-csrf-token': s.csrf, origin: 'http://storeops.test' });
