// What the report tests share: an app with a manual clock, a world whose token has the reports
// scope, the three reports over HTTP, and a small RFC 4180 reader.
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import type { TestContext, World } from '../support/world.ts';
import { makeWorld } from '../support/world.ts';

/** A world, its location in `timeZone` when given, and a second token with only the reports scope. */
export async function reportWorld(ctx: TestContext, opts: { timeZone?: string; pickupHours?: number } = {}): Promise<World & { reports: string }> {
  const w = await makeWorld(ctx.db, ctx.clock);
  const reports = crypto.randomBytes(18).toString('base64url');
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [
      {
        id: w.locationId,
        organization_id: w.organizationId,
        name: `Store ${w.locationId}`,
        ...(opts.timeZone === undefined ? {} : { time_zone: opts.timeZone }),
        ...(opts.pickupHours === undefined ? {} : { locker_pickup_hours: opts.pickupHours }),
      },
    ],
    api_tokens: [{ name: `reports-${w.organizationId}`, organization_id: w.organizationId, scopes: ['reports'], token: reports }],
  });
  return { ...w, reports };
}

export function report(app: App, token: string | null, path: 'cfh' | 'lockers' | 'cfh/requests.csv', query: Record<string, string | number>) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return app.inject({ method: 'GET', url: `/api/reports/${path}?${qs}`, headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

/** RFC 4180 rows (CRLF line ends, quoted fields with doubled quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}
