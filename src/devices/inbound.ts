// What devices send the service: acks of their messages (recorded in batches, acks.ts) and, from
// edge devices, what they heard on the channel (radio voice actions). Every message counts as a
// sighting for device health. The broker already checked that the device may publish on the topic.
import type { AckBatcher } from './acks.ts';
import type { PresenceSink } from './health.ts';
import type { GatewayLogger } from './transport.ts';
import { deviceName, deviceOfAckTopic, edgeOfHeardTopic, inboxTopic, parseAck } from './wire.ts';

export type HeardHandler = (edgeId: string, payload: Buffer) => Promise<void>;

export interface InboundDeps {
  acks: AckBatcher;
  presence: PresenceSink | null;
  heard: HeardHandler | null;
  log: GatewayLogger;
  /** Work that settle() must wait for. */
  track(work: Promise<unknown>): void;
}

export function receiveDeviceMessage(deps: InboundDeps, topic: string, payload: Buffer): void {
  const heardBy = edgeOfHeardTopic(topic);
  if (heardBy !== null) {
    deps.presence?.seen({ kind: 'edge', edgeId: heardBy });
    // The handler records and acts; whatever it throws is logged, never the broker's problem.
    const handler = deps.heard;
    if (handler !== null) deps.track(handler(heardBy, payload).catch((err: unknown) => deps.log.error({ err, topic }, 'a heard message failed')));
    return;
  }
  const device = deviceOfAckTopic(topic);
  if (device !== null) deps.presence?.seen(device); // any message counts as seen
  const ack = device === null ? null : parseAck(payload);
  if (device === null || ack === null) {
    deps.log.warn({ topic }, 'ignored a device ack that carries no command_id / message_id');
    return;
  }
  deps.log.debug({ device: deviceName(device), key: ack.key }, 'device ack');
  const flush = deps.acks.add({ topic: inboxTopic(device), key: ack.key, body: ack.body });
  if (flush !== null) deps.track(flush);
}
