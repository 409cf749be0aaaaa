// Why a synthesis did not happen. The HTTP layer maps each to a status (see radio/routes.ts).

/** Every worker is busy and the queue is full: try again shortly. */
export class SpeechBusyError extends Error {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds = 1) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The synthesis (waiting included) took longer than the time limit. */
export class SpeechTimeoutError extends Error {}

/** The input cannot be spoken: unknown voice, or audio longer than allowed. */
export class SpeechInputError extends Error {
  readonly reason: 'unknown_voice' | 'too_long' | 'empty';
  constructor(reason: 'unknown_voice' | 'too_long' | 'empty', message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The engine cannot run (failed to start, closed, crashed). */
export class SpeechUnavailableError extends Error {}
