// Wire formats of time. PostgreSQL keeps microseconds; the contract wants them all on the wire.

const PG_TIMESTAMPTZ = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$/;

/**
 * Turns PostgreSQL's text form of a timestamptz ("2026-01-15 09:00:00.123456+00") into the
 * contract's wire format ("2026-01-15T09:00:00.123456Z"), keeping all six fractional digits.
 */
export function pgTimestamptzToIso(text: string): string {
  const m = PG_TIMESTAMPTZ.exec(text);
  if (m === null) return text; // infinity and friends: shown as stored
  const [, date, time, fraction = '', offH = '+00', offM = '00', offS = '00'] = m;
  const micros = fraction.padEnd(6, '0');
  if (offH === '+00' && offM === '00' && offS === '00') return `${date}T${time}.${micros}Z`;
  const sign = offH.startsWith('-') ? -1 : 1;
  const offsetMs = sign * ((Math.abs(Number(offH)) * 60 + Number(offM)) * 60 + Number(offS)) * 1000;
  const utc = new Date(Date.parse(`${date}T${time}Z`) - offsetMs);
  return `${utc.toISOString().slice(0, 19)}.${micros}Z`;
}

/** A JS Date (milliseconds) in the wire format, padded to six fractional digits. */
export function isoMicros(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

/** "YYYY-MM-DD HH:MM:SS" in UTC, the format of a CFH request's closed_at and customer_canceled_at. */
export function sqlSeconds(iso: string | null): string | null {
  return iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
