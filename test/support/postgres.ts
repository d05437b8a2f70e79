/** A throwaway PostgreSQL database on the server `baseUrl` names (tests and benchmarks). */
import crypto from 'node:crypto';
import pg from 'pg';

export async function createDatabase(baseUrl: string, prefix = 'presence_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(baseUrl);
  const name = `${prefix}_${crypto.randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
