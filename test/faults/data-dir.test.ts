/**
 * A data directory that cannot be used: the server refuses to start with an error naming the path
 * (startServer rejects; `hcm-runner serve` exits non-zero), and a disk that fills up while serving
 * refuses new work clearly, loses nothing it accepted and leaves an intact database.
 *
 * Read-only: root ignores permission bits, so when the tests run as root the `serve` child runs
 * as the unprivileged user 65534 (nobody) against a root-owned 0555 directory. A full disk is
 * simulated with SQLite's `max_page_count` on the server's own connection (no tmpfs here).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/index.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { bin, repoRoot } from '../helpers/cli.js';
import { startTestServer, tempDir } from '../server/helpers.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'guard');
const root = tempDir('hcm-faults-data-');
afterAll(() => {
  try {
    chmodSync(join(root.path, 'ro'), 0o755);
  } catch {
    /* not created */
  }
  root.remove();
});

function serve(data: string, opts: { uid?: number; gid?: number } = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--dir', fixtures, '--port', '0', '--data', data], {
      cwd: repoRoot,
      env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: 'x', HCM_RUNNER_LOG_LEVEL: 'silent', HOME: root.path },
      stdio: ['ignore', 'ignore', 'pipe'],
      ...opts,
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stderr });
    });
  });
}

describe('a data directory that cannot be used', () => {
  const file = join(root.path, 'a-file');
  writeFileSync(file, 'not a directory');
  const below = join(file, 'data');

  it('startServer rejects with the path and the reason', async () => {
    await expect(startServer({ dir: fixtures, dataDir: below, port: 0, adminToken: 'x', logLevel: 'silent' })).rejects.toThrow(
      /cannot use data directory ".*a-file\/data": a part of the path is a file, not a directory/,
    );
  });

  it('`hcm-runner serve` exits non-zero naming the path', async () => {
    const r = await serve(below);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(below);
    expect(r.stderr).toMatch(/not a directory/);
  });

  // As root, permissions do not stop writes, so this runs `serve` as an unprivileged user — which
  // needs to reach the checkout. A clone inside a private (0700) directory cannot be reached; the
  // file-in-the-path case above then stands for "unusable data directory" on its own.
  const asRoot = process.getuid?.() === 0;
  it.skipIf(asRoot && !reachableByOthers(repoRoot))('`hcm-runner serve` on a read-only directory exits non-zero naming the path', async () => {
    const ro = join(root.path, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    chmodSync(root.path, 0o755); // let the unprivileged user reach it
    const r = await serve(ro, asRoot ? { uid: 65534, gid: 65534 } : {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(ro);
    expect(r.stderr).toMatch(/permission denied|read-only/);
  });
});

describe('the disk fills up while serving', () => {
  it('refuses new webhooks with a clear error, keeps everything it accepted, stays intact', async () => {
    const s = await startTestServer({ dir: join(dirname(fixtures), 'fuzz'), env: { FUZZ_SIGNING_SECRET: 'x' } });
    try {
      const db = (s.runtime.store as SqliteStore).db;
      const url = s.urls('echo').live;
      const post = (n: number) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n, pad: 'p'.repeat(32 * 1024) }) }).then(
          async (r) => ({
            status: r.status,
            headers: Object.fromEntries(r.headers),
            body: (await r.json()) as { executionId?: string; error?: string },
          }),
        );
      expect((await post(0)).status).toBe(200);
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages + 40}`);

      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i + 1)));
      const accepted = answers.filter((a) => a.status === 200).map((a) => a.body.executionId!);
      const refused = answers.filter((a) => a.status !== 200);
      expect(refused.length).toBeGreaterThan(0);
      for (const r of refused) {
        expect(r.status).toBe(503);
        expect(r.headers['retry-after']).toBe('30');
        // A webhook caller is not told where the data lives (the log is).
        expect(r.body.error).toBe('storage unavailable');
        expect(r.body.executionId).toBeUndefined(); // nothing was promised
      }
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);

      // Space again: every accepted execution is there, the database is intact, intake works.
      db.pragma('max_page_count = 1073741823');
      for (const id of accepted) expect((await s.api('GET', `/executions/${id}`)).status).toBe(200);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect((await post(999)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

/** Whether a user other than the owner can traverse every folder down to `path`. */
function reachableByOthers(path: string): boolean {
  for (let p = resolve(path); ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return false;
    if (dirname(p) === p) return true;
  }
}
