// A throwaway PostgreSQL database for one benchmark or soak run, made beside BENCH_DATABASE_URL's.
import crypto from 'node:crypto';
import pg from 'pg';

async function run(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function freshPostgres(url: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  await run(url, `CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => run(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * VACUUM ANALYZE of a whole database: what PostgreSQL's autovacuum does on its own between a
 * scenario's bursts of writes on a server that has it on (the shared benchmark machine has it off,
 * so the dead rows of one scenario would otherwise slow every later one).
 */
export async function vacuum(url: string): Promise<void> {
  await run(url, 'VACUUM ANALYZE');
}
