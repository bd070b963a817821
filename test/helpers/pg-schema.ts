/**
 * A PostgreSQL schema of its own for one test file's server (`?schema=` on the test database's
 * URL): `url` to hand to the runner, `drop()` when the file is done.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function testSchema(prefix: string): { name: string; url: string; drop(): Promise<void> } {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('schema', name);
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
