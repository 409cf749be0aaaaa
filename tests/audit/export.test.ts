// The audit log's CSV export (exportAuditEntries) with spreadsheet-safe cells, and that no operation
// changes or deletes an entry (contract section 17): the log has reads only, and only retention deletes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { fromPage, signInHttp } from '../support/people.ts';
import { testApp, type TestContext } from '../support/world.ts';
import { bearer, entry, org } from './support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp({ clock: new ManualClock('2026-04-01T10:00:00.000Z') });
});

test('the CSV: a header row, every entry of the filters newest first over many pages, every text cell quoted and spreadsheet-safe', async () => {
  const o = await org(ctx);
  await ctx.db.query(
    `INSERT INTO audit_entries (at, organization_id, location_id, actor_type, actor_id, actor_name, action, target_type, target_id, target_name, changes)
     SELECT '2026-01-01T00:00:00Z'::timestamptz + n * interval '1 second', $1, $2, 'system', NULL, 'storeops', 'bulk.thing', 'x', n::text, NULL, '{}'
     FROM generate_series(1, 1100) AS n`,
    [o.w.organizationId, o.w.locationId],
  );
  await entry(ctx, o, '2026-03-01T09:00:00Z', {
    action: 'person.updated',
    actor: { type: 'person', id: '1', name: '=HYPERLINK("http://evil.example","click")' },
    target: { type: 'person', id: 2, name: '+1-555, "Bob"\nsecond line' },
    changes: { name: { from: '-2', to: '@SUM(A1)' } },
    origin: { ip: '198.51.100.4', userAgent: '\tTabby' },
  });
  const res = await ctx.app.inject({ method: 'GET', url: `/api/admin/audit.csv?location_id=${o.w.locationId}`, headers: bearer(o.adminToken) });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
  assert.equal(res.headers['content-disposition'], `attachment; filename="audit-location-${o.w.locationId}.csv"`);
  const lines = res.body.split('\r\n');
  assert.equal(
    lines[0],
    '"id","at","actor_type","actor_id","actor_name","action","target_type","target_id","target_name","organization_id","location_id","changes","ip","user_agent"',
  );
  assert.equal(lines.at(-1), '', 'every row ends with CRLF');
  assert.equal(res.body.split('"bulk.thing"').length - 1, 1100, 'every entry, over pages of 500');
  assert.match(
    lines[1] as string,
    /^\d+,"2026-03-01T09:00:00\.000000Z","person","1","'=HYPERLINK\(""http:\/\/evil\.example"",""click""\)","person\.updated","person","2","'\+1-555, ""Bob""\nsecond/,
  );
  assert.ok(res.body.includes(`"{""name"":{""to"":""@SUM(A1)"",""from"":""-2""}}","198.51.100.4","'\tTabby"\r\n`), res.body.slice(0, 600));
  const bulk = lines.filter((l) => l.includes('"bulk.thing"')).map((l) => Number(/,"x","(\d+)",/.exec(l)?.[1]));
  assert.deepEqual(bulk.slice(0, 3), [1100, 1099, 1098], 'newest first');
  const filtered = await ctx.app.inject({ method: 'GET', url: '/api/admin/audit.csv?action=person&from=2026-02-01', headers: bearer(o.adminToken) });
  assert.equal(filtered.body.split('\r\n').length, 3, 'the header, one entry, the end');
  const wrong = await ctx.app.inject({ method: 'GET', url: '/api/admin/audit.csv?from=2026-03-02&to=2026-03-01', headers: bearer(o.adminToken) });
  assert.equal(wrong.statusCode, 422);
});

test('no operation changes or deletes an entry: the log has reads only, and only retention deletes', async () => {
  const o = await org(ctx);
  await entry(ctx, o, '2026-03-01T09:00:00Z', { action: 'person.created' });
  const snapshot = async () => JSON.stringify(await ctx.db.query('SELECT * FROM audit_entries WHERE organization_id = $1 ORDER BY id', [o.w.organizationId]));
  const [{ id } = { id: 0 }] = await ctx.db.query<{ id: number }>('SELECT id FROM audit_entries WHERE organization_id = $1', [o.w.organizationId]);
  const s = await signInHttp(ctx.app, o.admin);
  const before = await snapshot();
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    for (const url of ['/api/admin/audit', `/api/admin/audit/${id}`, '/api/admin/audit.csv']) {
      for (const headers of [fromPage(s), bearer(o.adminToken)]) {
        const res = await ctx.app.inject({ method, url, headers, payload: { action: 'tampered' } });
        assert.equal(res.statusCode, 404, `${method} ${url}`);
      }
    }
  }
  assert.equal(await snapshot(), before);
  const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
  const auditPaths = Object.entries(doc.paths).filter(([p]) => p.startsWith('/api/admin/audit'));
  assert.deepEqual(
    auditPaths.map(([p, ops]) => [p, Object.keys(ops)]),
    [
      ['/api/admin/audit', ['get']],
      ['/api/admin/audit.csv', ['get']],
    ],
  );

  // In the source: nothing updates an entry, and only retention's statement deletes them.
  const root = path.resolve(import.meta.dirname, '../../src');
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (/\.(ts|sql)$/.test(e.name)) {
        const text = fs.readFileSync(full, 'utf8');
        if (/UPDATE\s+audit_entries/i.test(text)) offenders.push(`${path.relative(root, full)} updates`);
        if (/DELETE\s+FROM\s+audit_entries/i.test(text) && path.relative(root, full) !== path.join('audit', 'store.ts'))
          offenders.push(`${path.relative(root, full)} deletes`);
        if (/TRUNCATE[^;]*audit_entries/i.test(text)) offenders.push(`${path.relative(root, full)} truncates`);
      }
    }
  };
  walk(root);
  assert.deepEqual(offenders, []);
});
