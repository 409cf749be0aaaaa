// What the console's sign-in page offers (contract section 17): single sign-on when it is
// configured, email and password where PASSWORD_SIGN_IN allows it, and badge or PIN when the browser
// is an enrolled store device. The page asks GET /console/api/session; signed out, that answer
// carries these, so a visitor learns nothing but how to sign in here.
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import type { StoreDeviceSignIn } from '../people/store-device-sign-in.ts';
import { locationName } from './store.ts';

export interface SignInWays {
  /** The contract names no display name for the provider: the button says "Sign in with single
   * sign-on", and the page names the issuer's host, where the person is sent. */
  sso: { name: string; host: string } | null;
  /** null: password sign-in is off; `admins_only`: PASSWORD_SIGN_IN=admins (org_admins only). */
  password: { admins_only: boolean } | null;
}

export function signInWays(config: Pick<Config, 'oidc' | 'passwordSignIn'>): SignInWays {
  return {
    sso: config.oidc === null ? null : { name: 'single sign-on', host: new URL(config.oidc.issuer).host },
    password: config.passwordSignIn === 'off' ? null : { admins_only: config.passwordSignIn === 'admins' },
  };
}

export interface StoreDeviceView {
  id: number;
  location_id: number;
  location_name: string;
}

/** The enrolled store device this browser is, with its store's name; null when it is none. */
export async function storeDeviceOf(
  deps: { db: Db; storeDevices: Pick<StoreDeviceSignIn, 'deviceOf'> },
  request: FastifyRequest,
): Promise<StoreDeviceView | null> {
  const device = await deps.storeDevices.deviceOf(request);
  if (device === null) return null;
  return { id: device.id, location_id: device.locationId, location_name: (await locationName(deps.db, device.locationId)) ?? `Store ${device.locationId}` };
}
