// The device wire contract (contract section 6), in one place: who a device is, its topics and
// which of them it may touch, the messages it receives (cabinet commands, play messages) and the
// acks it sends. The features, the embedded broker, the external broker's auth endpoints, the
// dispatcher's redelivery and the simulators all use these.
import { sql, type Sql } from '../db/sql.ts';

export type DeviceIdentity = { readonly kind: 'locker'; readonly lockerId: number } | { readonly kind: 'edge'; readonly edgeId: string };

/** The same pattern as provisioning: no MQTT wildcard or level separator can hide in a topic. */
const EDGE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const LOCKER_ID = /^[1-9][0-9]{0,9}$/;
const MAX_ID = 2_147_483_647;

export const lockerCommandTopic = (lockerId: number) => `lockers/${lockerId}/commands`;
/** lockerCommandTopic in SQL, for a statement that sends the command itself (lockerId: an SQL expression). */
export const lockerCommandTopicSql = (lockerId: Sql): Sql => sql`'lockers/' || ${lockerId} || '/commands'`;
export const lockerAckTopic = (lockerId: number) => `lockers/${lockerId}/acks`;
export const edgePlayTopic = (edgeId: string) => `radio/${edgeId}/play`;
export const edgePlayedTopic = (edgeId: string) => `radio/${edgeId}/played`;
/** What an edge device heard on the channel (voice actions, contract section 12): it publishes, the service listens. */
export const edgeHeardTopic = (edgeId: string) => `radio/${edgeId}/heard`;

export interface LockerCommandMessage {
  command_id: string;
  cabinet_key: number;
  cabinet_id: number;
  command: 'resize' | 'set_thermal_mode' | 'disable' | 'enable' | 'open' | 'close';
  door: 'front' | 'rear';
  issued_at: string;
  /** resize: the new size. */
  size?: string;
  /** set_thermal_mode: the new mode. */
  thermal_mode?: string;
}

/**
 * The JSON a locker receives on lockers/<locker_id>/commands (QoS 1), as jsonb, built by the statement that carries the command
 * out and sends it (L3, L5 agree, the delayed close): `cabinet` is the alias of the cabinet row as
 * changed (id, key, size, thermal_mode); the others are SQL expressions of the command (a value:
 * sql`${value}`). resize carries the new size, set_thermal_mode the new mode (tests/devices/wire.test.ts).
 */
export function lockerCommandMessageSql(cabinet: Sql, command: { commandId: Sql; command: Sql; door: Sql; issuedAt: Sql }): Sql {
  return sql`jsonb_build_object('command_id', ${command.commandId}::text, 'cabinet_key', ${cabinet}.key, 'cabinet_id', ${cabinet}.id,
      'command', ${command.command}::text, 'door', ${command.door}::text, 'issued_at', ${command.issuedAt}::text)
    || CASE ${command.command}::text WHEN 'resize' THEN jsonb_build_object('size', ${cabinet}.size)
         WHEN 'set_thermal_mode' THEN jsonb_build_object('thermal_mode', ${cabinet}.thermal_mode) ELSE '{}'::jsonb END`;
}

export interface PlayMessage {
  message_id: string;
  /** The text as spoken. */
  text: string;
  actor: string;
  mime: 'audio/wav';
  /** The WAV, base64. */
  audio: string;
  queued_at: string;
  /** queued_at + RADIO_MESSAGE_TTL_SECONDS: never sent after it, and a device drops it past it. */
  expires_at: string;
  priority: 'normal' | 'urgent';
}

/** A play message as the device outbox keeps it: all of it but the audio, which is stored once
 * (radio_audio) and put in by the dispatcher when it publishes (`withAudio`). */
export type QueuedPlayMessage = Omit<PlayMessage, 'audio'>;

/** The JSON an edge device receives on radio/<edge_id>/play (QoS 1), without its audio. */
export function playMessage(m: {
  messageId: string;
  spokenText: string;
  actor: string;
  queuedAt: string;
  expiresAt: string;
  priority: 'normal' | 'urgent';
}): QueuedPlayMessage {
  return {
    message_id: m.messageId,
    text: m.spokenText,
    actor: m.actor,
    mime: 'audio/wav',
    queued_at: m.queuedAt,
    expires_at: m.expiresAt,
    priority: m.priority,
  };
}

// jsonb keeps an object's keys shortest first, then in byte order; the payload comes back so.
const byJsonbKeyOrder = (a: string, b: string) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A queued message with its audio put in as `audio` (base64): what the device receives. The keys
 * are in jsonb's order, so the JSON is byte for byte what was published when the payload itself
 * held the audio (as rows queued before the audio was kept apart still do).
 */
export function withAudio(payload: Readonly<Record<string, unknown>>, wav: Buffer): Record<string, unknown> {
  const message: Record<string, unknown> = { ...payload, audio: wav.toString('base64') };
  return Object.fromEntries(
    Object.keys(message)
      .sort(byJsonbKeyOrder)
      .map((key) => [key, message[key]]),
  );
}

/** The service's subscriptions: every device's acks, and what edge devices heard. */
export const DEVICE_MESSAGE_SUBSCRIPTIONS = ['lockers/+/acks', 'radio/+/played', 'radio/+/heard'] as const;

/** `locker:<locker_id>` or `edge:<edge_id>`; anything else is no device. */
export function parseDeviceUsername(username: string | null | undefined): DeviceIdentity | null {
  if (typeof username !== 'string') return null;
  const colon = username.indexOf(':');
  if (colon < 0) return null;
  const kind = username.slice(0, colon);
  const id = username.slice(colon + 1);
  if (kind === 'locker' && LOCKER_ID.test(id) && Number(id) <= MAX_ID) return { kind: 'locker', lockerId: Number(id) };
  if (kind === 'edge' && EDGE_ID.test(id)) return { kind: 'edge', edgeId: id };
  return null;
}

export function deviceName(device: DeviceIdentity): string {
  return device.kind === 'locker' ? `locker:${device.lockerId}` : `edge:${device.edgeId}`;
}

/** The one topic a device subscribes to and receives on. */
export function inboxTopic(device: DeviceIdentity): string {
  return device.kind === 'locker' ? lockerCommandTopic(device.lockerId) : edgePlayTopic(device.edgeId);
}

/** The one topic a device publishes on. */
export function ackTopic(device: DeviceIdentity): string {
  return device.kind === 'locker' ? lockerAckTopic(device.lockerId) : edgePlayedTopic(device.edgeId);
}

/** A filter is compared as a string: a device's own topic has no wildcard, so any wildcard is refused. */
export const maySubscribe = (device: DeviceIdentity, filter: string) => filter === inboxTopic(device);
export const mayReceive = (device: DeviceIdentity, topic: string) => topic === inboxTopic(device);
// An edge device also publishes what it heard, on its own heard topic only.
export const mayPublish = (device: DeviceIdentity, topic: string) =>
  topic === ackTopic(device) || (device.kind === 'edge' && topic === edgeHeardTopic(device.edgeId));

/** The edge device behind a heard topic, or null when the topic is not one. */
export function edgeOfHeardTopic(topic: string): string | null {
  const parts = topic.split('/');
  if (parts.length !== 3 || parts[0] !== 'radio' || parts[2] !== 'heard') return null;
  const device = parseDeviceUsername(`edge:${parts[1]}`);
  return device?.kind === 'edge' ? device.edgeId : null;
}

/** The device behind an ack topic, or null when the topic is not an ack topic. */
export function deviceOfAckTopic(topic: string): DeviceIdentity | null {
  const parts = topic.split('/');
  if (parts.length !== 3) return null;
  const [root, id, leaf] = parts as [string, string, string];
  if (root === 'lockers' && leaf === 'acks') return parseDeviceUsername(`locker:${id}`);
  if (root === 'radio' && leaf === 'played') return parseDeviceUsername(`edge:${id}`);
  return null;
}

/** The device a message on an inbox topic is for, or null when the topic is not an inbox. */
export function deviceOfInboxTopic(topic: string): DeviceIdentity | null {
  const parts = topic.split('/');
  if (parts.length !== 3) return null;
  const [root, id, leaf] = parts as [string, string, string];
  if (root === 'lockers' && leaf === 'commands') return parseDeviceUsername(`locker:${id}`);
  if (root === 'radio' && leaf === 'play') return parseDeviceUsername(`edge:${id}`);
  return null;
}

export interface DeviceAck {
  /** The message_key of the acknowledged outbox message (its command_id / message_id). */
  key: string;
  body: Record<string, unknown>;
}

const MAX_KEY_LENGTH = 200;

/** A device message's JSON object, or null when it is not one (bad JSON, an array, a scalar). */
export function parseJsonObject(payload: Buffer | string): Record<string, unknown> | null {
  let body: unknown;
  try {
    body = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));
  } catch {
    return null;
  }
  return body === null || typeof body !== 'object' || Array.isArray(body) ? null : (body as Record<string, unknown>);
}

/** An ack is a JSON object carrying `command_id` or `message_id` (a string, or a number written as one). */
export function parseAck(payload: Buffer | string): DeviceAck | null {
  const record = parseJsonObject(payload);
  if (record === null) return null;
  const raw = record.command_id ?? record.message_id;
  const key = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) return null;
  return { key, body: record };
}

export type BrokerAccess = 'subscribe' | 'publish' | 'read';

/** One authorization decision, as a broker asks it: subscribe to a filter, publish on or receive from a topic. */
export function mayAccess(device: DeviceIdentity, access: BrokerAccess, topic: string): boolean {
  if (access === 'subscribe') return maySubscribe(device, topic);
  if (access === 'publish') return mayPublish(device, topic);
  return mayReceive(device, topic);
}
