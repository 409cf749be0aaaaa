// Who may do what on the embedded broker: a device logs in with its key (a failed login answered
// later and later, so guessing keys over MQTT is slowed and a right key never is), and is confined
// to its own topics (wire.ts's ACL) for what it subscribes to, publishes and receives.
import type { AedesOptions, AuthenticateError, Client } from 'aedes';
import { sha256hex } from '../http/secrets.ts';
import type { LoginAdmission } from './mqtt-guard.ts';
import type { GatewayLogger } from './transport.ts';
import { deviceName, mayPublish, mayReceive, maySubscribe, parseDeviceUsername, type DeviceIdentity } from './wire.ts';

// aedes' AuthErrorCode is a const enum, which erasable TypeScript cannot import.
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;

function refusal(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

export interface BrokerAccessOptions {
  /** Checks a device's key against the database. */
  authenticate(device: DeviceIdentity, key: string): Promise<boolean>;
  /** Where a client that logged in is remembered as its device. */
  devices: WeakMap<Client, DeviceIdentity>;
  /** The digest of the key each client logged in with (its session ends when the key changes). */
  keys: WeakMap<Client, string>;
  admission: LoginAdmission;
  log: GatewayLogger;
}

/** aedes' authentication and authorization hooks for devices. */
export function deviceAccess(opts: BrokerAccessOptions): Pick<AedesOptions, 'authenticate' | 'authorizeSubscribe' | 'authorizePublish' | 'authorizeForward'> {
  const { devices, admission, log } = opts;
  /** A failed login is answered at once while its address and username are within their budget,
   * later after a pause: guessing keys over MQTT is slowed, a right key never is. */
  const refuse = (client: Client, username: string | null, error: AuthenticateError, done: (err: AuthenticateError, ok: null) => void) => {
    const delay = admission.failed(admission.addressOf(client.conn), username);
    if (delay === 0) done(error, null);
    else setTimeout(() => done(error, null), delay).unref();
  };
  return {
    authenticate(client, username, password, done) {
      const device = parseDeviceUsername(username);
      if (device === null || password === undefined) {
        log.warn({ username: username ?? null, clientId: client.id }, 'device refused: unknown username');
        refuse(client, username ?? null, refusal('not authorized', username === undefined ? NOT_AUTHORIZED : BAD_USERNAME_OR_PASSWORD), done);
        return;
      }
      opts.authenticate(device, password.toString('utf8')).then(
        (ok) => {
          if (!ok) {
            log.warn({ device: deviceName(device), clientId: client.id }, 'device refused: wrong key');
            refuse(client, username ?? null, refusal('bad username or password', BAD_USERNAME_OR_PASSWORD), done);
            return;
          }
          devices.set(client, device);
          opts.keys.set(client, sha256hex(password.toString('utf8')));
          admission.settled(client.conn);
          // A client id is the device's own: another device (another tenant's, with a guessable
          // id) presenting the same one must not take over its session and kick it off.
          client.id = `${deviceName(device)}/${client.id}`;
          done(null, true);
        },
        (err: unknown) => {
          log.error({ err, device: deviceName(device) }, 'device authentication failed');
          done(refusal('server unavailable', SERVER_UNAVAILABLE), null);
        },
      );
    },
    authorizeSubscribe(client, sub, done) {
      const device = devices.get(client);
      if (device === undefined || !maySubscribe(device, sub.topic)) {
        log.warn({ device: device ? deviceName(device) : null, topic: sub.topic }, 'subscription refused');
        done(null, null); // SUBACK 0x80 for this filter; the connection stays
        return;
      }
      done(null, sub);
    },
    authorizePublish(client, packet, done) {
      const device = client === null ? undefined : devices.get(client);
      if (device === undefined || !mayPublish(device, packet.topic)) {
        log.warn({ device: device ? deviceName(device) : null, topic: packet.topic }, 'publish refused, disconnecting');
        done(new Error('not authorized to publish on this topic')); // MQTT 3.1.1 can only disconnect
        return;
      }
      packet.retain = false; // an ack is an event, not a state to keep
      done(null);
    },
    authorizeForward(client, packet) {
      const device = devices.get(client);
      return device !== undefined && mayReceive(device, packet.topic) ? packet : null;
    },
  };
}
