// The service's logger, made first: compose() hands it to Fastify (every request's log line) and,
// as a child per component, to everything else that logs (devices, jobs, webhooks, speech, ...).
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { redactUrl } from './http/secrets.ts';

/** Header names whose values never reach a log line. */
export const REDACTED_HEADERS = ['authorization', 'api-key', 'x-messaging-signature', 'x-twilio-signature', 'cookie'];

export type ServiceLogger = Logger;

/** What a component logs through: the service's logger, its lines marked with the component. */
export interface ComponentLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export function createLogger(config: Pick<Config, 'logLevel'>): ServiceLogger {
  return pino({
    level: config.logLevel,
    redact: { paths: REDACTED_HEADERS.map((h) => `req.headers["${h}"]`), censor: '[REDACTED]' },
    serializers: {
      // A query string may carry secret_token: logged redacted.
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
      err: pino.stdSerializers.err,
    },
  });
}

export const componentLogger = (logger: ServiceLogger, component: string): ComponentLogger => logger.child({ component });
