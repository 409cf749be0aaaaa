// History written in SQL skips the statements that close requests, and with them the folding of
// P1's figures (src/reports/figures-store.ts): after writing it, a bench folds it again with
// migration 039's own backfill, as the upgrade to that version does.
import fs from 'node:fs';
import path from 'node:path';

const MIGRATION = path.resolve(import.meta.dirname, '../../src/db/migrations/036_cfh_report_figures.sql');

/** The statements that make P1's figures again from every closed request. */
export function refoldReportFigures(): string {
  const text = fs.readFileSync(MIGRATION, 'utf8');
  return `DELETE FROM cfh_report_days; DELETE FROM cfh_report_counts; ${text.slice(text.indexOf('WITH facts AS'))}`;
}
