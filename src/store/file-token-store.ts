/**
 * TokenStore on a JSON file of encrypted blobs (`<dir>/tokens.json`), written atomically
 * (temp file + rename). `withLock` = an in-process mutex per key plus a lock file created with
 * O_EXCL (`wx`), so processes sharing the directory also refresh one at a time; a lock file older
 * than `staleLockMs` is considered abandoned and removed.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { StoredTokens, TokenStore } from '../connectors/types.js';
import { loadTokenKey, TokenCipher } from './token-crypto.js';

interface FileShape {
  version: 1;
  entries: Record<string, string>;
}

export interface FileTokenStoreOptions {
  /** Key material instead of HCM_RUNNER_SECRET / secret.key (tests). */
  key?: Buffer;
  staleLockMs?: number;
  lockPollMs?: number;
  lockTimeoutMs?: number;
}

export class FileTokenStore implements TokenStore {
  private cipher?: Promise<TokenCipher>;
  private fileChain: Promise<unknown> = Promise.resolve();
  private readonly keyChains = new Map<string, Promise<unknown>>();
  readonly file: string;

  constructor(
    readonly dir: string,
    private readonly opts: FileTokenStoreOptions = {},
  ) {
    this.file = join(dir, 'tokens.json');
  }

  private getCipher(): Promise<TokenCipher> {
    this.cipher ??= (this.opts.key ? Promise.resolve(this.opts.key) : loadTokenKey(this.dir)).then((k) => new TokenCipher(k));
    return this.cipher;
  }

  private async read(): Promise<FileShape> {
    try {
      const parsed = JSON.parse(await fs.readFile(this.file, 'utf8')) as FileShape;
      return parsed && typeof parsed.entries === 'object' ? parsed : { version: 1, entries: {} };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: {} };
      throw err;
    }
  }

  private async write(data: FileShape): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(data, null, 2), { mode: 0o600 });
    await fs.rename(tmp, this.file);
  }

  /** Serializes read-modify-write of the file within this process. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.fileChain.then(fn, fn);
    this.fileChain = run.catch(() => undefined);
    return run;
  }

  async get(key: string): Promise<StoredTokens | undefined> {
    const blob = (await this.read()).entries[key];
    return blob ? (await this.getCipher()).decrypt<StoredTokens>(blob) : undefined;
  }

  async set(key: string, tokens: StoredTokens): Promise<void> {
    const blob = (await this.getCipher()).encrypt(tokens);
    await this.serial(async () => {
      const data = await this.read();
      data.entries[key] = blob;
      await this.write(data);
    });
  }

  async delete(key: string): Promise<void> {
    await this.serial(async () => {
      const data = await this.read();
      if (!(key in data.entries)) return;
      delete data.entries[key];
      await this.write(data);
    });
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.keyChains.get(key) ?? Promise.resolve();
    const run = prev.then(
      () => this.withFileLock(key, fn),
      () => this.withFileLock(key, fn),
    );
    const tail = run.catch(() => undefined);
    this.keyChains.set(key, tail);
    void tail.then(() => {
      if (this.keyChains.get(key) === tail) this.keyChains.delete(key);
    });
    return run;
  }

  private async withFileLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const lock = join(this.dir, `tokens.${createHash('sha256').update(key).digest('hex').slice(0, 16)}.lock`);
    const stale = this.opts.staleLockMs ?? 30_000;
    const poll = this.opts.lockPollMs ?? 25;
    const deadline = Date.now() + (this.opts.lockTimeoutMs ?? 60_000);
    for (;;) {
      try {
        const h = await fs.open(lock, 'wx', 0o600);
        await h.writeFile(`${process.pid} ${new Date().toISOString()}`);
        await h.close();
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const st = await fs.stat(lock).catch(() => undefined);
        if (st && Date.now() - st.mtimeMs > stale) {
          await fs.unlink(lock).catch(() => undefined);
          continue;
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for the token lock of ${key}`);
        await new Promise((r) => setTimeout(r, poll));
      }
    }
    try {
      return await fn();
    } finally {
      await fs.unlink(lock).catch(() => undefined);
    }
  }
}
