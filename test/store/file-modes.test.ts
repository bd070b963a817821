/**
 * The SQLite database holds webhook tokens, OAuth tokens and every payload: the database, its WAL
 * and shared-memory files are the owner's alone (0600), and a data directory the runner creates is
 * too (0700). A directory the operator made keeps the mode they gave it; database files left with
 * wider modes are tightened on open.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/index.js';
import { SQLITE_FILE, SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const root = mkdtempSync(join(tmpdir(), 'hcm-file-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;
const dbFiles = (dir: string) => [SQLITE_FILE, `${SQLITE_FILE}-wal`, `${SQLITE_FILE}-shm`].map((f) => join(dir, f));

describe('file modes of the SQLite store', () => {
  // A umask of 022 would give 0644 files and 0755 directories without the runner's own modes.
  const umask = process.umask(0o022);
  afterAll(() => process.umask(umask));

  it('a created data directory is 0700, the database, WAL and shm files 0600', async () => {
    const dir = join(root, 'created', 'data');
    const store = await SqliteStore.open(dir);
    try {
      expect(mode(join(root, 'created'))).toBe(0o700);
      expect(mode(dir)).toBe(0o700);
      for (const f of dbFiles(dir)) expect(mode(f), f).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it("keeps the mode of the operator's own directory and tightens database files left wider", async () => {
    const dir = join(root, 'operators');
    mkdirSync(dir, { mode: 0o750 });
    chmodSync(dir, 0o750);
    for (const f of dbFiles(dir)) writeFileSync(f, '', { mode: 0o644 });
    const store = await SqliteStore.open(dir);
    try {
      expect(mode(dir)).toBe(0o750);
      for (const f of dbFiles(dir)) expect(mode(f), f).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it('`serve` creates its data directory 0700 (its store and admin token 0600)', async () => {
    const data = join(root, 'served');
    const s = await startServer({ dir: join(root, 'no-integrations'), port: 0, dataDir: data, logLevel: 'silent' });
    try {
      expect(mode(data)).toBe(0o700);
      for (const f of [...dbFiles(data), join(data, 'admin-token')]) expect(mode(f), f).toBe(0o600);
    } finally {
      await s.close(0);
    }
  });
});
