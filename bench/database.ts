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
