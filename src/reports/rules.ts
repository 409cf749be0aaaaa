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
