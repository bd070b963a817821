/**
 * Storage faults: the SQLite file is overwritten mid-page under a running server. Every route
 * that needs the store (webhook intake, the admin API, the console, the OAuth callback) answers
 * 503 with Retry-After (not 500, not 400), and the server keeps answering /healthz. The operator's
 * routes and the log name the problem and the file; callers of the public routes are told
 * "storage unavailable" and nothing of the data directory.
 */
import { openSync, writeSync, closeSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ADMIN, startTestServer, type TestServer } from '../server/helpers.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fuzz');
let s: TestServer;
const logLines: string[] = [];
beforeAll(async () => {
  const logger = pino({ level: 'error' }, { write: (line: string) => logLines.push(line) });
  s = await startTestServer({ dir: fixtures, env: { FUZZ_SIGNING_SECRET: 'x' }, logger });
});
afterAll(async () => {
  await s?.stop();
});

/** A console session cookie (signed in with the admin token, as the sign-in form does). */
async function signInToConsole(): Promise<string> {
  const res = await fetch(`${s.url}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ token: ADMIN, next: '/console/' }),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** Checkpoints the database, then overwrites it from the middle of page 2 to the end with garbage. */
function corrupt(store: SqliteStore): void {
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  const size = statSync(store.file).size;
  const fd = openSync(store.file, 'r+');
  try {
    // Mid-page: from half of page 2 on (the header page stays valid, so SQLite opens it).
    const pageSize = store.db.pragma('page_size', { simple: true }) as number;
    const garbage = Buffer.alloc(size - pageSize - pageSize / 2, 0xa5);
    writeSync(fd, garbage, 0, garbage.length, pageSize + pageSize / 2);
  } finally {
    closeSync(fd);
  }
  // Drop the pages SQLite keeps in memory (as memory pressure would): the next reads go to the file.
  store.db.pragma('shrink_memory');
}

describe('a corrupt SQLite database', () => {
  it('answers 503 with Retry-After on webhook intake, the admin API, the console and the OAuth callback', async () => {
    const url = s.urls('echo').live;
    const post = () =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'p'.repeat(8192) }) });
    for (let i = 0; i < 20; i++) expect((await post()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const consoleCookie = await signInToConsole();

    corrupt(s.runtime.store as SqliteStore);

    const intake = await post();
    expect(intake.status).toBe(503);
    expect(intake.headers.get('retry-after')).toMatch(/^\d+$/);
    const intakeText = await intake.text();
    expect(JSON.parse(intakeText)).toEqual({ error: 'storage unavailable' });
    expect(intakeText).not.toContain(s.data.path);
    // The log has what the caller was not told.
    const refused = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'webhook refused: storage unavailable');
    expect(refused.err).toMatch(/corrupt.*restore .* from a backup/);
    expect(refused.err).toContain(s.data.path);

    const api = await s.api('GET', '/executions?limit=100');
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(api.body.error).toMatch(/corrupt/);

    // The console answers with its own page, not JSON.
    const page = await fetch(`${s.url}/console/executions`, { headers: { cookie: consoleCookie } });
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/Try again later[\s\S]*corrupt/);

    // An unusable store is not a bad callback: 503, not 400.
    const callback = await fetch(`${s.url}/oauth/callback?code=c&state=s`, { headers: { accept: 'application/json' } });
    expect(callback.status).toBe(503);
    expect(callback.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await callback.json()).toEqual({ error: 'storage unavailable' });

    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });
});
