/** Encrypted file token store: at-rest encryption, key file, atomic writes, cross-instance lock. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileTokenStore } from '../../../src/store/file-token-store.js';
import { decryptString, deriveKey, encryptString, loadTokenKey } from '../../../src/store/token-crypto.js';

describe('token crypto + FileTokenStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hcm-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('encrypts with a versioned AES-256-GCM format, random IV, tamper-evident', () => {
    const key = deriveKey('s3cret');
    const a = encryptString('hello', key);
    const b = encryptString('hello', key);
    expect(a).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(a).not.toBe(b);
    expect(decryptString(a, key)).toBe('hello');
    expect(() => decryptString(a, deriveKey('other'))).toThrow(/cannot be decrypted/);
    const parts = a.split(':');
    parts[3] = Buffer.from('xxxxx').toString('base64url');
    expect(() => decryptString(parts.join(':'), key)).toThrow();
  });

  it('without HCM_RUNNER_SECRET creates secret.key (0600) once; with it, uses the secret', async () => {
    const k1 = await loadTokenKey(dir);
    const k2 = await loadTokenKey(dir, '');
    expect(k1.equals(k2)).toBe(true);
    expect((await stat(join(dir, 'secret.key'))).mode & 0o777).toBe(0o600);
    const k3 = await loadTokenKey(dir, 'abc');
    expect(k3.equals(deriveKey('abc'))).toBe(true);
  });

  it('stores tokens encrypted (no plaintext on disk), get/set/delete', async () => {
    const store = new FileTokenStore(dir, { key: randomBytes(32) });
    await store.set('i:c', { accessToken: 'AT-plain', refreshToken: 'RT-plain', expiresAt: 123 });
    await store.set('i:d', { accessToken: 'other' });
    expect(await store.get('i:c')).toEqual({ accessToken: 'AT-plain', refreshToken: 'RT-plain', expiresAt: 123 });
    const raw = await readFile(join(dir, 'tokens.json'), 'utf8');
    expect(raw).not.toContain('AT-plain');
    expect(raw).not.toContain('RT-plain');
    await store.delete('i:c');
    expect(await store.get('i:c')).toBeUndefined();
    expect(await store.get('i:d')).toEqual({ accessToken: 'other' });
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('concurrent sets on different keys are not lost', async () => {
    const store = new FileTokenStore(dir, { key: randomBytes(32) });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.set(`k${i}`, { accessToken: `t${i}` })));
    for (let i = 0; i < 20; i++) expect(await store.get(`k${i}`)).toEqual({ accessToken: `t${i}` });
  });

  it('withLock excludes across two store instances on the same directory (replicas)', async () => {
    const key = randomBytes(32);
    const a = new FileTokenStore(dir, { key, lockPollMs: 5 });
    const b = new FileTokenStore(dir, { key, lockPollMs: 5 });
    let inside = 0;
    let max = 0;
    const work = async () => {
      inside++;
      max = Math.max(max, inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    };
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).withLock('x:y', work)));
    expect(max).toBe(1);
    expect((await readdir(dir)).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('breaks a stale lock file and releases the lock when fn throws', async () => {
    const store = new FileTokenStore(dir, { key: randomBytes(32), staleLockMs: 50, lockPollMs: 5 });
    await expect(
      store.withLock('k', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await store.withLock('k', async () => {
      const lock = (await readdir(dir)).find((f) => f.endsWith('.lock'))!;
      expect(lock).toBeTruthy();
    });
    // simulate a crashed holder
    const other = new FileTokenStore(dir, { key: randomBytes(32), staleLockMs: 50, lockPollMs: 5 });
    let lockName = '';
    await other.withLock('k', async () => {
      lockName = (await readdir(dir)).find((f) => f.endsWith('.lock'))!;
    });
    await writeFile(join(dir, lockName), 'dead');
    // A stale lock that were never taken over would leave this waiting until the test times out.
    let ran = false;
    await store.withLock('k', async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });
});
