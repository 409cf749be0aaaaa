// The radio as compose() builds it: R1-R3, announcements of Call for Help requests (a subscriber
// asking for a job that speaks), voice actions on what edge devices heard, the acks of plays, and
// section 18's administration of edge devices and messaging accounts.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import type { HeardHandler } from '../devices/inbound.ts';
import { routesOf, type FeatureModule } from '../feature-module.ts';
import type { ApiTokens } from '../http/auth.ts';
import { RADIO_REQUESTS_SUBSCRIBER, type FrenchOptionWords } from './announce.ts';
import { handleHeard, type VoiceCfh } from './heard.ts';
import { HEARD_CONCURRENCY_PER_EDGE, HEARD_QUEUE_PER_EDGE, heardGate } from './heard-gate.ts';
import { announcementSubscriber, RADIO_ANNOUNCEMENTS_SUBSCRIBER, radioJobs } from './jobs.ts';
import { RADIO_PLAYED_ACKS, recordPlayed } from './played.ts';
import { radioRoutes } from './routes.ts';
import { radioAdminRoutes } from './admin/routes.ts';
import type { SpeechSynthesizer } from './speech/speech.ts';
import { followRequests } from './voice-store.ts';

export interface RadioModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'radioMessageTtlSeconds' | 'radioQueueLimit' | 'publicBaseUrl'>;
  speech: SpeechSynthesizer;
  apiTokens: ApiTokens;
  /** Told how long each synthesis took (/metrics). */
  observeSynthesis: (seconds: number) => void;
  /** What the radio may do and read of Call for Help (its module gives it). */
  cfh: { voice: VoiceCfh; frenchOptionWords: FrenchOptionWords };
  log: { warn(obj: object, msg: string): void };
}

export interface RadioModule extends FeatureModule {
  /** What an edge device heard: voice actions, bounded per edge device. */
  heard: HeardHandler;
}

export function radioModule(deps: RadioModuleDeps): RadioModule {
  const { db, clock, config, speech, apiTokens, observeSynthesis, log } = deps;
  const play = { speech, observeSynthesis, ttlSeconds: config.radioMessageTtlSeconds, queueLimit: config.radioQueueLimit };
  const voice = { ...play, db, clock, cfh: deps.cfh.voice, log };
  const gate = heardGate((edgeId, payload) => handleHeard(voice, edgeId, payload), {
    concurrency: HEARD_CONCURRENCY_PER_EDGE,
    queueLimit: HEARD_QUEUE_PER_EDGE,
    log,
  });
  return {
    routes: async (app) => {
      await routesOf(radioRoutes, { ...play, db, clock, publicBaseUrl: config.publicBaseUrl, apiTokens })(app);
      // Section 18: edge devices and messaging accounts.
      await routesOf(radioAdminRoutes, { db, clock, publicBaseUrl: config.publicBaseUrl, apiTokens })(app);
    },
    jobs: radioJobs({ ...play, db, frenchOptionWords: deps.cfh.frenchOptionWords }),
    subscribers: {
      [RADIO_ANNOUNCEMENTS_SUBSCRIBER]: announcementSubscriber({ clock }),
      [RADIO_REQUESTS_SUBSCRIBER]: followRequests,
    },
    acks: { [RADIO_PLAYED_ACKS]: { kind: 'edge', handle: recordPlayed } },
    heard: async (edgeId, payload) => {
      await gate(edgeId, payload);
    },
  };
}
