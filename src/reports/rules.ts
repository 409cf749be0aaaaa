// Pure rules of the reports: what a date range is, and how a CSV cell is written.
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

/**
 * One CSV cell (RFC 4180): every text cell is quoted (its quotes doubled), so a comma, quote or
 * line break in it never splits a row; numbers and booleans are written bare. Text that a
 * spreadsheet would run as a formula (starting with = + - @, or a tab or carriage return, as OWASP
 * advises) gets a leading ' first.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  let text = value;
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replaceAll('"', '""')}"`;
}

export const csvLine = (cells: readonly (string | number | boolean | null)[]): string => `${cells.map(csvCell).join(',')}\r\n`;
