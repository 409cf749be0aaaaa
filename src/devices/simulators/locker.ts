// A locker device without hardware: takes the cabinet commands, "moves" the doors, acks each
// command, and reports door changes with the contract's L7 status update, as version 2 firmware does.
import os from 'node:os';
import { lockerAckTopic, lockerCommandTopic } from '../wire.ts';
import { connectDevice, type Print, type Simulator } from './connection.ts';

export interface LockerSimulatorOptions {
  lockerId: number;
  /** The locker's api_key: its MQTT password and its L7 api-key header. */
  key: string;
  mqttUrl: string;
  /** The service's HTTP base URL, for the L7 status update. */
  httpUrl: string;
  print?: Print;
  /** false: a clean MQTT session (tests). */
  persistentSession?: boolean;
}

type Door = 'open' | 'closed';
export const SIMULATOR_FIRMWARE = 'storeops-locker-simulator/1';

function localIp(): string {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

export function startLockerSimulator(opts: LockerSimulatorOptions): Simulator {
  const print: Print = opts.print ?? ((line) => console.log(`[locker ${opts.lockerId}] ${line}`));
  // What this locker believes of its doors; a cabinet it has not heard of is closed.
  const doors = new Map<number, { front: Door; rear: Door }>();
  const doorsOf = (key: number) => doors.get(key) ?? { front: 'closed' as Door, rear: 'closed' as Door };

  const report = async (cabinetKey: number) => {
    const state = doorsOf(cabinetKey);
    const body = {
      cabinets: [{ key: cabinetKey, front_status: state.front, rear_status: state.rear }],
      locker_info: { ip: localIp(), firmware: SIMULATOR_FIRMWARE },
      event: { type: 'door' },
    };
    try {
      const response = await fetch(`${opts.httpUrl.replace(/\/+$/, '')}/api/lockers/cabinet/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': opts.key },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      print(`reported cabinet ${cabinetKey} front ${state.front}, rear ${state.rear}: HTTP ${response.status}${response.ok ? '' : ` ${text.slice(0, 200)}`}`);
    } catch (err) {
      print(`could not report cabinet ${cabinetKey}: ${(err as Error).message}`);
    }
  };

  return connectDevice({
    url: opts.mqttUrl,
    username: `locker:${opts.lockerId}`,
    password: opts.key,
    clientId: `locker-${opts.lockerId}-sim`,
    inbox: lockerCommandTopic(opts.lockerId),
    idField: 'command_id',
    print,
    persistentSession: opts.persistentSession,
    async onMessage({ id, body, duplicate }, client) {
      const command = String(body.command ?? '');
      const cabinetKey = Number(body.cabinet_key);
      const door: 'front' | 'rear' = body.door === 'rear' ? 'rear' : 'front';
      let moved = false;
      if (duplicate) {
        print(`command ${id} again (${command}): already done, acking again`);
      } else if ((command === 'open' || command === 'close') && Number.isInteger(cabinetKey)) {
        const state = { ...doorsOf(cabinetKey) };
        state[door] = command === 'open' ? 'open' : 'closed';
        doors.set(cabinetKey, state);
        moved = true;
        print(`command ${id}: ${command} cabinet ${cabinetKey} ${door} door -> ${state[door]}`);
      } else {
        const detail = Object.entries(body)
          .filter(([k]) => !['command_id', 'command', 'cabinet_key', 'issued_at'].includes(k))
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(' ');
        print(`command ${id}: ${command} cabinet ${Number.isInteger(cabinetKey) ? cabinetKey : '?'}${detail ? ` (${detail})` : ''}`);
      }
      await client.publishAsync(lockerAckTopic(opts.lockerId), JSON.stringify({ command_id: id, status: 'ok' }), { qos: 1 });
      print(`acked ${id}`);
      if (moved) await report(cabinetKey);
    },
  });
}
