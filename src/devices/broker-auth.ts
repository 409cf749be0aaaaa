// The decisions an external broker asks the service for over HTTP (routes.ts): is this the
// service's own login (MQTT_URL's user), is this a device with its key, and a device subscribing
// to its inbox (its unacked messages go out once the subscription exists).
import type { Db } from '../db/db.ts';
import { safeEqual } from '../http/secrets.ts';
import { credentialsOf } from './client.ts';
import { checkDeviceKey } from './credentials.ts';
import { parseDeviceUsername, type DeviceIdentity } from './wire.ts';

/** After an external broker asks about a device's SUBSCRIBE, the subscription exists shortly after. */
const SUBSCRIBE_SETTLE_MS = 1_000;

export class BrokerAuthority {
  readonly #db: Db;
  readonly #service: { username: string; password: string } | null;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(db: Db, mqttUrl: string | null) {
    this.#db = db;
    this.#service = mqttUrl === null ? null : credentialsOf(mqttUrl);
  }

  /** Are these the service's own credentials on the external broker (from MQTT_URL)? */
  isServiceLogin(username: string, password: string | null): boolean {
    if (this.#service === null) return false;
    const sameUser = safeEqual(username, this.#service.username);
    return password === null ? sameUser : safeEqual(password, this.#service.password) && sameUser;
  }

  /** The device behind MQTT credentials, or null. */
  async device(username: string, password: string): Promise<DeviceIdentity | null> {
    const device = parseDeviceUsername(username);
    if (device === null) return null;
    return (await checkDeviceKey(this.#db, device, password)) ? device : null;
  }

  /** Calls `redeliver` once the device's subscription should exist. */
  afterSubscribe(redeliver: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      redeliver();
    }, SUBSCRIBE_SETTLE_MS);
    timer.unref();
    this.#timers.add(timer);
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
