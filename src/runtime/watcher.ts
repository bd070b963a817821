/**
 * Hot reload: watches the integrations folder and applies what changed, file by file, through
 * the registry (which keeps a file's last good version when its new text has problems).
 *
 * - `fs.watch(dir, {recursive: true})` events are debounced (default 150 ms); then the folder is
 *   listed and every file's stat (inode, size, mtime, ctime) compared with the last one seen:
 *   vanished files are removed first, then new and changed files are reloaded. Event file names
 *   are not trusted (they are unreliable across editors and platforms); the stat diff is the truth.
 * - Editors' atomic saves (write a temp file, rename it over the original) show up as a new inode;
 *   temp files themselves are ignored (not *.yaml/*.yml, or dot files).
 * - A periodic rescan (default every 2 s) is the fallback when events are lost, the watch fails
 *   (inotify limits) or the folder itself was replaced (git-ops swapping a directory).
 * - A missing folder is never taken as "every file deleted": the scan waits for it to come back.
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { listIntegrationFiles } from '../definition/load.js';
import { fileSignature, type IntegrationRegistry } from './registry.js';

export interface WatcherOptions {
  /** Quiet time after the last event before the folder is scanned (default 150 ms). */
  debounceMs?: number;
  /** Fallback full scan interval (default 2000 ms; 0 disables it). */
  rescanMs?: number;
  logger?: Logger;
}

export interface ScanResult {
  reloaded: string[];
  removed: string[];
}

/**
 * On Linux, Node's recursive `fs.watch` is JavaScript over one inotify watch per file: it stats
 * every file when it starts and reports each one as new (a full scan right after start-up). A
 * watch per folder sees the same changes — inotify reports the files of a watched folder — so
 * there each folder is watched on its own; elsewhere the platform's recursive watch is one call.
 */
const WATCH_EACH_FOLDER = process.platform === 'linux';

export class FolderWatcher {
  private readonly dir: string;
  private readonly seen = new Map<string, string>();
  /** Watches by folder: the root only (recursive), or the root and each folder below it. */
  private readonly fsWatchers = new Map<string, FSWatcher>();
  private watchedIno?: number;
  private debounce?: NodeJS.Timeout;
  private rescan?: NodeJS.Timeout;
  private closed = false;
  private missingLogged = false;
  private readonly onReloaded = () => this.snapshot();

  constructor(
    private readonly registry: IntegrationRegistry,
    private readonly opts: WatcherOptions = {},
  ) {
    this.dir = resolve(registry.dir);
  }

  start(): void {
    this.snapshot();
    this.registry.on('reloaded', this.onReloaded);
    this.watchDir();
    const every = this.opts.rescanMs ?? 2000;
    if (every > 0) {
      this.rescan = setInterval(() => {
        if (!WATCH_EACH_FOLDER) this.watchDir(); // per folder, scan() renews the watches itself
        this.scan();
      }, every);
      this.rescan.unref();
    }
  }

  close(): void {
    this.closed = true;
    this.registry.off('reloaded', this.onReloaded);
    clearTimeout(this.debounce);
    clearInterval(this.rescan);
    this.closeWatches();
  }

  private closeWatches(): void {
    for (const w of this.fsWatchers.values()) w.close();
    this.fsWatchers.clear();
  }

  /** Compares the folder with what was seen last and applies the differences (synchronously). */
  scan(): ScanResult {
    const result: ScanResult = { reloaded: [], removed: [] };
    if (this.closed) return result;
    if (WATCH_EACH_FOLDER) this.watchDir(); // a folder created since the last scan gets its watch
    let files: string[];
    try {
      if (!statSync(this.dir).isDirectory()) throw new Error('not a directory');
      files = listIntegrationFiles([this.dir]).files;
      this.missingLogged = false;
    } catch (err) {
      if (!this.missingLogged)
        this.opts.logger?.warn({ dir: this.dir, err: (err as Error).message }, 'integrations folder unreadable; keeping what runs until it is back');
      this.missingLogged = true;
      return result;
    }
    const present = new Map<string, string>();
    for (const f of files) present.set(this.registry.display(f), f);
    // Removals first: a renamed file frees its name before the new path claims it.
    for (const entry of this.registry.entries()) {
      if (present.has(entry.file)) continue;
      this.registry.remove(entry.file);
      result.removed.push(entry.file);
    }
    for (const abs of [...this.seen.keys()]) if (!present.has(this.registry.display(abs))) this.seen.delete(abs);
    const known = new Set(this.registry.entries().map((e) => e.file));
    for (const [file, abs] of present) {
      const sig = fileSignature(abs);
      if (sig === undefined) continue;
      if (this.seen.get(abs) === sig && known.has(file)) continue;
      this.seen.set(abs, sig);
      this.registry.reloadFile(abs);
      result.reloaded.push(file);
    }
    // A file rejected for a duplicate name may load now that the other file is gone or renamed.
    if (result.removed.length > 0 || result.reloaded.length > 0) {
      for (const entry of this.registry.entries()) {
        if (entry.problems.length === 0 || result.reloaded.includes(entry.file)) continue;
        if (!entry.problems.some((p) => p.message.includes('is already used by'))) continue;
        const abs = present.get(entry.file);
        if (abs) {
          this.registry.reloadFile(abs);
          result.reloaded.push(entry.file);
        }
      }
    }
    if (result.reloaded.length || result.removed.length) {
      // Files whose new text was rejected are named apart: their own entry already said "has
      // problems; last good version keeps running", and this one must not call them reloaded.
      const rejected = new Set(
        this.registry
          .entries()
          .filter((e) => e.problems.length > 0)
          .map((e) => e.file),
      );
      const loaded = result.reloaded.filter((f) => !rejected.has(f));
      const withProblems = result.reloaded.filter((f) => rejected.has(f));
      const summary = {
        ...(loaded.length ? { loaded } : {}),
        ...(withProblems.length ? { withProblems } : {}),
        ...(result.removed.length ? { removed: result.removed } : {}),
      };
      this.opts.logger?.info(summary, 'integrations folder changed');
    }
    return result;
  }

  /**
   * Remembers, per file, the signature the registry took when it read the file (after a full
   * reload): a file edited after it was read — say while the server was still starting — then
   * differs and the next scan reloads it.
   */
  private snapshot(): void {
    this.seen.clear();
    try {
      // One pass over the entries (not a sorted copy per file: that was quadratic in the folder's size).
      const signatures = new Map<string, string | undefined>();
      for (const e of this.registry.entries()) if (!signatures.has(e.file)) signatures.set(e.file, e.signature);
      for (const f of listIntegrationFiles([this.dir]).files) {
        const sig = signatures.get(this.registry.display(f));
        if (sig !== undefined) this.seen.set(f, sig);
      }
    } catch {
      // Unreadable folder: the next scan reports it.
    }
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.scan(), this.opts.debounceMs ?? 150);
    this.debounce.unref();
  }

  /** (Re)creates the fs watches when there are none, the folder was replaced, or (per folder) folders came or went. */
  private watchDir(): void {
    if (this.closed) return;
    let ino: number | undefined;
    try {
      ino = statSync(this.dir).ino;
    } catch {
      ino = undefined;
    }
    if (ino !== this.watchedIno) this.closeWatches();
    if (ino === undefined) return;
    if (!WATCH_EACH_FOLDER && this.fsWatchers.size > 0) return;
    const folders = WATCH_EACH_FOLDER ? listFolders(this.dir) : [this.dir];
    const wanted = new Set(folders);
    for (const [folder, w] of this.fsWatchers) {
      if (wanted.has(folder)) continue;
      w.close();
      this.fsWatchers.delete(folder);
    }
    let added = false;
    for (const folder of folders) {
      if (this.fsWatchers.has(folder)) continue;
      try {
        const w = watch(folder, { recursive: !WATCH_EACH_FOLDER, persistent: false }, () => this.schedule());
        w.on('error', (err) => {
          this.opts.logger?.warn({ dir: folder, err: err.message }, 'file watch failed; falling back to periodic rescans');
          w.close();
          if (this.fsWatchers.get(folder) === w) this.fsWatchers.delete(folder);
        });
        this.fsWatchers.set(folder, w);
        added = true;
      } catch (err) {
        if (folder === this.dir)
          this.opts.logger?.warn(
            { dir: this.dir, err: (err as Error).message },
            'cannot watch the integrations folder; falling back to periodic rescans',
          );
        // A folder below it that vanished meanwhile: the next scan sees that.
      }
    }
    if (!this.fsWatchers.has(this.dir)) return;
    this.watchedIno = ino;
    // The folder may have changed between the last scan and the new watch.
    if (added) this.schedule();
  }
}

/** The folder and every folder below it that listIntegrationFiles walks (not dot folders, not node_modules). */
function listFolders(root: string): string[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    let entries;
    try {
      entries = readdirSync(out[i]!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') out.push(join(out[i]!, e.name));
  }
  return out;
}
