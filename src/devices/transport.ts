// What the dispatcher needs from a broker, embedded or external.

export interface GatewayLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: GatewayLogger = Object.freeze({ debug() {}, info() {}, warn() {}, error() {} });

export interface Transport {
  /** Publishes with QoS 1; resolves once the broker has taken the message. */
  publish(topic: string, payload: Buffer): Promise<void>;
  /** The broker is reachable (embedded: listening; external: connected). */
  readonly up: boolean;
  close(): Promise<void>;
}
