// Pure rules of the reports: what a date range is (a CSV cell is written by http/csv.ts).
import { AppError } from '../http/errors.ts';

/** Past this many days a range is refused: per_day lists every day, and a report must stay cheap. */
export const MAX_RANGE_DAYS = 3_700;

export interface DayRange {
  from: string;
  to: string;
}

const dayNumber = (day: string): number | null => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (m === null) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 2026-02-30 over to March: a day that does not round-trip does not exist.
  return new Date(ms).toISOString().slice(0, 10) === day ? ms / 86_400_000 : null;
};

const invalidRange = (field: string, problem: string) => new AppError(422, 'validation_failed', `${field}: ${problem}`, { errors: { [field]: [problem] } });

/** The range of a report: two existing dates, from not after to, at most MAX_RANGE_DAYS days. */
export function dayRange(from: string, to: string): DayRange {
  const a = dayNumber(from);
  if (a === null) throw invalidRange('from', 'must be a date (YYYY-MM-DD)');
  const b = dayNumber(to);
  if (b === null) throw invalidRange('to', 'must be a date (YYYY-MM-DD)');
  if (a > b) throw invalidRange('from', 'must not be after to');
  if (b - a + 1 > MAX_RANGE_DAYS) throw invalidRange('to', `the range must be at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
/** The first day of the month `day` is in, or of its year; `later` months or years on. */
const firstOf = (day: string, grain: 'month' | 'year', later: number): string => {
  const d = new Date(`${day}T00:00:00Z`);
  const at = grain === 'year' ? Date.UTC(d.getUTCFullYear() + later, 0, 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + later, 1);
  return new Date(at).toISOString().slice(0, 10);
};

/** Kept counts of one grain (0 day, 1 month, 2 year) whose periods start from `from` until before `until`. */
export interface Span {
  grain: 0 | 1 | 2;
  from: string;
  until: string;
}

/** The periods of [from, until) of `grain` wholly inside it, and the finer spans around them. */
function spansWithin(from: string, until: string, grain: 1 | 2, out: Span[]): void {
  const unit = grain === 2 ? 'year' : 'month';
  const first = firstOf(from, unit, 0) === from ? from : firstOf(from, unit, 1);
  const last = firstOf(until, unit, 0);
  const finer = (a: string, b: string) => {
    if (a >= b) return;
    if (grain === 2) spansWithin(a, b, 1, out);
    else out.push({ grain: 0, from: a, until: b });
  };
  if (first >= last) return finer(from, until);
  out.push({ grain, from: first, until: last });
  finer(from, first);
  finer(last, until);
}

/**
 * How P1 reads a range's kept counts: its whole years by their year rows, the whole months around
 * them by their month rows, the days around those by their day rows. Ten years are at most 10
 * years, 22 months and 60 days.
 */
export function spansOf(range: DayRange): Span[] {
  const out: Span[] = [];
  spansWithin(range.from, nextDay(range.to), 2, out);
  return out;
}

/** Durations of a bucket of P1's summary: how many, and the sum of their seconds. */
export interface Bucket {
  n: number;
  seconds: number;
}

const millis = (s: number): number => Math.round(s * 1000) / 1000;

/**
 * The median and 90th percentile, interpolated as PostgreSQL's percentile_cont, of durations kept
 * as buckets: each duration of a bucket counts as the bucket's mean (a bucket is 2% wide, so that is
 * within 2% of the duration; durations that are all equal in their bucket are exact).
 */
export function percentiles(buckets: readonly Bucket[]): { median_s: number | null; p90_s: number | null } {
  const sorted = buckets.filter((b) => b.n > 0).map((b) => ({ n: b.n, mean: b.seconds / b.n }));
  sorted.sort((x, y) => x.mean - y.mean);
  const total = sorted.reduce((sum, b) => sum + b.n, 0);
  if (total === 0) return { median_s: null, p90_s: null };
  const at = (index: number): number => {
    let seen = 0;
    for (const b of sorted) {
      seen += b.n;
      if (index < seen) return b.mean;
    }
    return (sorted[sorted.length - 1] as { mean: number }).mean;
  };
  const cont = (p: number): number => {
    const pos = p * (total - 1);
    const lo = Math.floor(pos);
    const low = at(lo);
    return pos === lo ? low : low + (pos - lo) * (at(lo + 1) - low);
  };
  return { median_s: millis(cont(0.5)), p90_s: millis(cont(0.9)) };
}

/** Every day of the range with its figures (zeros for the days `days` does not list, by their offset from `from`). */
export function perDay(
  range: DayRange,
  days: { at: readonly number[]; requests: readonly number[]; escalations: readonly number[]; timeouts: readonly number[] },
): { day: string; requests: number; escalations: number; timeouts: number }[] {
  const first = Date.parse(`${range.from}T00:00:00Z`);
  const count = (Date.parse(`${range.to}T00:00:00Z`) - first) / 86_400_000 + 1;
  const out = Array.from({ length: count }, (_, i) => ({
    day: new Date(first + i * 86_400_000).toISOString().slice(0, 10),
    requests: 0,
    escalations: 0,
    timeouts: 0,
  }));
  days.at.forEach((at, i) => {
    const day = out[at];
    if (day === undefined) return;
    day.requests = Number(days.requests[i]);
    day.escalations = Number(days.escalations[i]);
    day.timeouts = Number(days.timeouts[i]);
  });
  return out;
}
