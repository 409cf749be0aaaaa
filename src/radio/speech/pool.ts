// A fixed pool of speech workers with a bounded queue and a time limit per synthesis. Work never
// piles up: when the queue is full a request is refused at once (SpeechBusyError), and a request
// that cannot finish in time is given up (SpeechTimeoutError), its worker replaced if it hangs.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SynthesisFailure, SynthesisRequest, WorkerReply } from './protocol.ts';
import { SpeechBusyError, SpeechInputError, SpeechTimeoutError, SpeechUnavailableError } from './errors.ts';

export interface PoolOptions {
  /** Worker threads, one engine each. */
  size: number;
  /** Requests that may wait for a free worker; more are refused. */
  queueLimit: number;
  /** Milliseconds from submission to result, waiting included. */
  timeoutMs: number;
  /** Script each worker runs. */
  workerUrl: URL;
  /** Syntheses after which a worker is replaced by a fresh one (an engine that leaks); default never. */
  recycleAfter?: number;
  /** Largest heap of a worker (MB): an engine that outgrows it ends its worker, not the service. */
  maxHeapMb?: number;
  /** Given to every worker (workerData.shared), e.g. a WebAssembly module compiled once for all. */
  shared?: () => Promise<unknown>;
  /** A folder under which each worker gets one of its own (its workerData.dir), removed when the
   * worker ends however it ends (recycled, crashed, terminated mid-synthesis). */
  scratchDir?: string;
}

interface Job {
  id: number;
  input: string;
  voice: string;
  maxSamples: number;
  deadline: number;
  resolve: (samples: Int16Array) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | null;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** Syntheses it has served. */
  served: number;
  /** Why its engine could not start, as it said before exiting. */
  initFailure: string | null;
  /** Its scratch folder, if the pool gives workers one. */
  dir: string | null;
  /** The worker this one replaces once it is ready (a recycled one serves until then). */
  replaces: Slot | null;
  /** Served its share: its replacement is starting; it leaves once that one is ready and it is idle. */
  retiring: boolean;
  /** Its replacement is ready: it leaves as soon as its job is done. */
  leaveWhenIdle: boolean;
}

// Time the main thread leaves a worker to abort by itself before it is terminated.
const HANG_GRACE_MS = 2_000;
// A replacement worker that cannot start is tried again after this long, doubling, this many times.
const RESTART_DELAY_MS = 500;
const MAX_RESTART_FAILURES = 5;

export class WorkerPool {
  readonly #opts: PoolOptions;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #nextWorker = 1;
  #shared: unknown = undefined;
  #closed = false;
  #initError: Error | null = null;
  /** Some worker has been ready: a replacement that cannot start is tried again, not fatal. */
  #everReady = false;
  #restartFailures = 0;
  readonly #ready: Promise<void>;
  #markReady: () => void = () => {};
  #markFailed: (err: Error) => void = () => {};

  constructor(opts: PoolOptions) {
    this.#opts = opts;
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#markReady = resolve;
      this.#markFailed = reject;
    });
    // Whoever does not await ready() must not see an unhandled rejection.
    this.#ready.catch(() => {});
    if (opts.shared === undefined) {
      for (let i = 0; i < opts.size; i++) this.#spawn();
      return;
    }
    // Made once, before the first worker: every worker (recycled ones too) starts from it.
    opts.shared().then(
      (value) => {
        this.#shared = value;
        for (let i = 0; i < opts.size && !this.#closed; i++) this.#spawn();
      },
      (err: unknown) => this.#failInit(err instanceof Error ? err.message : String(err)),
    );
  }

  /** Resolves when every worker has started and warmed its engine; rejects if one cannot start. */
  ready(): Promise<void> {
    return this.#ready;
  }

  get queued(): number {
    return this.#queue.length;
  }

  run(input: string, voice: string, maxSamples: number): Promise<Int16Array> {
    if (this.#closed) return Promise.reject(new SpeechUnavailableError('the speech synthesizer is closed'));
    if (this.#initError !== null) return Promise.reject(new SpeechUnavailableError(`the speech engine cannot start: ${this.#initError.message}`));
    const idle = this.#idleSlot();
    if (idle === null && this.#queue.length >= this.#opts.queueLimit) {
      return Promise.reject(new SpeechBusyError('every speech worker is busy and the queue is full'));
    }
    return new Promise<Int16Array>((resolve, reject) => {
      const job: Job = { id: this.#nextId++, input, voice, maxSamples, deadline: performance.now() + this.#opts.timeoutMs, resolve, reject, timer: null };
      if (idle !== null) {
        this.#dispatch(idle, job);
      } else {
        job.timer = setTimeout(() => this.#expireQueued(job), this.#opts.timeoutMs);
        this.#queue.push(job);
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#settle(job, new SpeechUnavailableError('the speech synthesizer is closing'));
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const slot of slots) if (slot.job !== null) this.#settle(slot.job, new SpeechUnavailableError('the speech synthesizer is closing'));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
    this.#markFailed(new SpeechUnavailableError('the speech synthesizer was closed before it was ready'));
  }

  #idleSlot(): Slot | null {
    for (const slot of this.#slots) if (slot.ready && slot.job === null) return slot;
    return null;
  }

  #spawn(replaces: Slot | null = null): void {
    const dir = this.#opts.scratchDir === undefined ? null : path.join(this.#opts.scratchDir, `worker-${this.#nextWorker++}`);
    const worker = new Worker(this.#opts.workerUrl, {
      workerData: { dir, shared: this.#shared },
      ...(this.#opts.maxHeapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: this.#opts.maxHeapMb } }),
    });
    // Idle workers must not keep a process alive that has nothing else to do.
    worker.unref();
    const slot: Slot = { worker, ready: false, job: null, served: 0, initFailure: null, dir, replaces, retiring: false, leaveWhenIdle: false };
    this.#slots.add(slot);
    worker.on('message', (message: WorkerReply) => this.#onMessage(slot, message));
    worker.on('error', (err) => this.#onExit(slot, err));
    worker.on('exit', (code) => {
      // Whatever the engine left in its folder goes with the worker (a run cut off by terminate).
      if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
      this.#onExit(slot, new Error(`speech worker exited with code ${code}`));
    });
  }

  /** Takes a worker out of service before it is terminated: no job can be handed to it meanwhile. */
  #retire(slot: Slot): void {
    this.#slots.delete(slot);
    void slot.worker.terminate();
  }

  #onMessage(slot: Slot, message: WorkerReply): void {
    switch (message.kind) {
      case 'ready':
        if (!this.#slots.has(slot)) return;
        slot.ready = true;
        if (slot.replaces !== null) {
          // The worker it replaces has served its share: it leaves now, or after the job it has.
          const old = slot.replaces;
          slot.replaces = null;
          if (old.job === null) this.#retire(old);
          else old.leaveWhenIdle = true;
        }
        this.#everReady = true;
        this.#restartFailures = 0;
        if ([...this.#slots].every((s) => s.ready)) this.#markReady();
        this.#next(slot);
        return;
      case 'init_failed':
        // Its exit follows (the worker exits after saying so): #onExit decides.
        slot.initFailure = message.message;
        return;
      case 'done':
      case 'failed': {
        const job = slot.job;
        if (job === null || job.id !== message.id) return; // a reply to a job already given up
        slot.job = null;
        slot.served++;
        if (message.kind === 'done') this.#settle(job, null, message.samples);
        else this.#settle(job, failureError(message.reason, message.message));
        if (slot.leaveWhenIdle) {
          this.#retire(slot);
          return;
        }
        if (this.#opts.recycleAfter !== undefined && slot.served >= this.#opts.recycleAfter && !slot.retiring && !this.#closed) {
          // Its replacement starts now; this one goes on serving until it is ready, then leaves and
          // its memory goes with it: no text waits for a worker to start.
          slot.retiring = true;
          this.#spawn(slot);
        }
        this.#next(slot);
        return;
      }
    }
  }

  #onExit(slot: Slot, err: Error): void {
    if (!this.#slots.delete(slot)) return; // already handled (error is followed by exit)
    if (slot.job !== null) this.#settle(slot.job, new SpeechUnavailableError(`the speech worker stopped: ${err.message}`));
    slot.job = null;
    if (this.#closed || this.#initError !== null) return;
    if (!slot.ready) {
      if (!this.#everReady || this.#restartFailures >= MAX_RESTART_FAILURES) {
        // It never got its engine going: another would fail the same way, so say so and stop.
        this.#failInit(slot.initFailure ?? err.message);
        return;
      }
      // A replacement (recycled or crashed worker) could not start, once: its engine worked before,
      // so try again shortly rather than give the engine up for good. Waiting jobs keep their deadlines.
      const delay = RESTART_DELAY_MS * 2 ** this.#restartFailures++;
      setTimeout(() => {
        if (!this.#closed && this.#initError === null) this.#spawn(slot.replaces);
      }, delay).unref();
      return;
    }
    // A worker that was serving died (out of memory, a hang we terminated): replace it, unless
    // its replacement is already starting (it was being recycled).
    if (!slot.retiring) this.#spawn();
  }

  #failInit(message: string): void {
    this.#initError = new Error(message);
    this.#markFailed(new SpeechUnavailableError(`the speech engine cannot start: ${message}`));
    for (const job of this.#queue.splice(0)) this.#settle(job, new SpeechUnavailableError(`the speech engine cannot start: ${message}`));
  }

  #next(slot: Slot): void {
    const job = this.#queue.shift();
    if (job === undefined) return;
    if (job.timer !== null) clearTimeout(job.timer);
    job.timer = null;
    this.#dispatch(slot, job);
  }

  #dispatch(slot: Slot, job: Job): void {
    const budgetMs = Math.max(1, Math.floor(job.deadline - performance.now()));
    slot.job = job;
    const request: SynthesisRequest = { id: job.id, input: job.input, voice: job.voice, budgetMs, maxSamples: job.maxSamples };
    slot.worker.postMessage(request);
    // The worker aborts by itself at its budget; one that does not answer is stuck: replace it.
    job.timer = setTimeout(() => {
      if (slot.job !== job) return;
      slot.job = null;
      // Out of the pool before the job's caller hears of it: the next job goes to the replacement.
      this.#retire(slot);
      if (!this.#closed && !slot.retiring) this.#spawn();
      this.#settle(job, new SpeechTimeoutError('the speech synthesis did not finish in time'));
    }, budgetMs + HANG_GRACE_MS);
  }

  #expireQueued(job: Job): void {
    const at = this.#queue.indexOf(job);
    if (at < 0) return;
    this.#queue.splice(at, 1);
    this.#settle(job, new SpeechTimeoutError('no speech worker became free in time'));
  }

  #settle(job: Job, err: Error | null, samples?: Int16Array): void {
    if (job.timer !== null) clearTimeout(job.timer);
    job.timer = null;
    if (err !== null) job.reject(err);
    else job.resolve(samples ?? new Int16Array(0));
  }
}

function failureError(reason: SynthesisFailure, message: string): Error {
  switch (reason) {
    case 'timeout':
      return new SpeechTimeoutError(message);
    case 'unknown_voice':
    case 'too_long':
      return new SpeechInputError(reason, message);
    case 'engine_error':
      return new SpeechUnavailableError(message);
  }
}
