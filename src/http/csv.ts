// CSV as the service writes it (P2, the audit log's export): RFC 4180 cells that a spreadsheet
// shows as text and never runs.

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
