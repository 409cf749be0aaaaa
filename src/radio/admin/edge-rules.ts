// The rules of an edge device's and a messaging account's setup, without I/O, for the provisioning
// file and section 18's operations alike.
import crypto from 'node:crypto';
import { randomToken } from '../../http/secrets.ts';

/** What an edge device announces of its location's CFH requests when not told (contract section 12). */
export const DEFAULT_ANNOUNCE_CFH: readonly string[] = ['created', 'escalated', 'cancelled'];

/** A device key the service makes: 256 random bits, URL-safe (an MQTT password and an api-key header). */
export const newDeviceKey = (): string => randomToken(32);

/** An edge id the service makes when administration gives none: `edge-` and 12 random hex digits. */
export const newEdgeId = (): string => `edge-${crypto.randomBytes(6).toString('hex')}`;
