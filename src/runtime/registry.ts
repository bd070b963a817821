/**
 * The integration registry: what the process currently runs, per file. A file whose new version
 * has problems keeps its last good version running (a bad file never takes anything down;
 * docs/server.md "Integration status") and reports the problems. The hot-reload watcher builds on `replace`/`remove` and the
 * `change` event; `loadAll` is the full re-read (start, POST /api/reload, SIGHUP).
 */
import { EventEmitter } from 'node:events';
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { checkCalls } from '../definition/calls.js';
import { listIntegrationFiles, loadFile, markDuplicateNames, statSignature, type FileHeader, type LoadedFile } from '../definition/load.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from '../definition/limits.js';
import type { CompiledIntegration, Problem } from '../definition/types.js';
import { gitCommitOf } from './git-commit.js';

export interface RegistryEntry {
  /** The file as it is named in problems and in GET /api/integrations. */
  file: string;
  /** The integration's name: the running version's, else the file's `name:` if readable, else the file name. */
  name: string;
  /** The version that runs: the newest good one (undefined when the file never loaded). */
  integration?: CompiledIntegration;
  /** Problems of the file's current text (empty when the current text is the running version). */
  problems: Problem[];
  /** What could be read from a file that never loaded (for listings). */
  header?: FileHeader;
  /** The file's stat signature taken just before it was read: the watcher compares against it. */
  signature?: string;
}

export type RegistryChange =
  | { kind: 'added' | 'updated'; file: string; name: string; previous?: CompiledIntegration; current: CompiledIntegration }
  | { kind: 'removed'; file: string; name: string; previous?: CompiledIntegration }
  | { kind: 'error'; file: string; name: string; problems: Problem[]; running?: CompiledIntegration };

export interface RegistryEvents {
  change: [RegistryChange];
  /** After loadAll (start, reload). */
  reloaded: [RegistryEntry[]];
}

export class IntegrationRegistry extends EventEmitter<RegistryEvents> {
  private readonly byFile = new Map<string, RegistryEntry>();
  private readonly byName = new Map<string, RegistryEntry>();

  constructor(
    readonly dir: string,
    private readonly limits: FileLimits = DEFAULT_FILE_LIMITS,
  ) {
    super();
  }

  /** The running version of an integration. The hot path: one map lookup. */
  get(name: string): CompiledIntegration | undefined {
    return this.byName.get(name)?.integration;
  }

  entry(name: string): RegistryEntry | undefined {
    return this.byName.get(name) ?? [...this.byFile.values()].find((e) => e.name === name);
  }

  entries(): RegistryEntry[] {
    return [...this.byFile.values()].sort((a, b) => a.name.localeCompare(b.name) || a.file.localeCompare(b.file));
  }

  integrations(): CompiledIntegration[] {
    return [...this.byName.values()].map((e) => e.integration!).filter(Boolean);
  }

  /**
   * Re-reads the whole folder (start, POST /api/reload, SIGHUP): new and changed files replaced,
   * vanished files removed. The event loop runs between files: each file is bounded
   * (docs/authoring.md "File limits"), so a folder of large files never blocks the server for
   * their sum. The new set is applied at once, after every file was read.
   */
  async loadAll(): Promise<RegistryEntry[]> {
    const { files } = listIntegrationFiles([this.dir]);
    const signatures = new Map<string, string | undefined>();
    const loaded: LoadedFile[] = [];
    // Once per reload, not per file or execution: the versions loaded now share the checkout's commit.
    const commit = gitCommitOf(this.dir);
    for (const f of files) {
      const display = this.display(f);
      const l = loadFile(f, display, this.limits);
      if (commit && l.integration) l.integration.commit = commit;
      // Taken as the file was opened, before reading: a later edit differs from it.
      signatures.set(display, l.signature ?? fileSignature(f));
      loaded.push(l);
      await new Promise<void>((r) => setImmediate(r));
    }
    return this.applyAll(loaded, signatures);
  }

  private applyAll(loaded: LoadedFile[], signatures: Map<string, string | undefined>): RegistryEntry[] {
    markDuplicateNames(loaded);
    checkCalls(loaded);
    const seen = new Set(loaded.map((l) => l.file));
    for (const file of [...this.byFile.keys()]) if (!seen.has(file)) this.remove(file);
    // markDuplicateNames already settled names within this set; rebuild the name index from it
    // so swapped or moved names do not clash with the previous generation.
    this.byName.clear();
    for (const l of loaded) this.replace(l.file, l, signatures.get(l.file));
    const entries = this.entries();
    this.emit('reloaded', entries);
    return entries;
  }

  /** Loads one file from disk (the watcher's entry point) and applies it. */
  reloadFile(path: string): RegistryEntry {
    const display = this.display(path);
    const loaded = loadFile(resolve(path), display, this.limits);
    // Against the others as loaded now; a callee that has not arrived yet fails at run time instead.
    checkCalls(
      [loaded],
      this.integrations().filter((i) => this.byName.get(i.name)?.file !== display),
      { unknown: false },
    );
    const commit = loaded.integration && gitCommitOf(this.dir);
    if (commit && loaded.integration) loaded.integration.commit = commit;
    return this.replace(display, loaded, loaded.signature ?? fileSignature(path));
  }

  /**
   * Applies a freshly loaded version of `file`. With problems the previous good version keeps
   * running; a name already used by another file is a problem of this one.
   */
  replace(file: string, loaded: LoadedFile, signature?: string): RegistryEntry {
    const prev = this.byFile.get(file);
    const problems = [...loaded.problems];
    let next = loaded.integration;
    if (next) {
      const owner = this.byName.get(next.name);
      if (owner && owner.file !== file) {
        problems.push({
          file,
          line: loaded.namePosition?.line ?? 1,
          column: loaded.namePosition?.column ?? 1,
          message: `integration name "${next.name}" is already used by ${owner.file}; names must be unique — rename one of them`,
          path: '/name',
        });
        next = undefined;
      }
    }
    if (!next) {
      // The last good version keeps running — unless another file has taken its name meanwhile.
      const owner = prev?.integration ? this.byName.get(prev.integration.name) : undefined;
      const running = prev?.integration && (!owner || owner === prev) ? prev.integration : undefined;
      const header = running ? undefined : (loaded.header ?? headerOf(loaded.integration));
      const entry: RegistryEntry = {
        file,
        name: running?.name ?? header?.name ?? basename(file).replace(/\.ya?ml$/i, ''),
        integration: running,
        problems,
      };
      if (header) entry.header = header;
      if (signature) entry.signature = signature;
      this.byFile.set(file, entry);
      if (running) this.byName.set(running.name, entry);
      this.emit('change', { kind: 'error', file, name: entry.name, problems, running });
      return entry;
    }
    // A rename frees the old name.
    if (prev?.integration && prev.integration.name !== next.name && this.byName.get(prev.integration.name) === prev)
      this.byName.delete(prev.integration.name);
    const entry: RegistryEntry = { file, name: next.name, integration: next, problems: [] };
    if (signature) entry.signature = signature;
    this.byFile.set(file, entry);
    this.byName.set(next.name, entry);
    if (!prev?.integration || prev.integration.hash !== next.hash || prev.integration.name !== next.name) {
      this.emit('change', { kind: prev?.integration ? 'updated' : 'added', file, name: next.name, previous: prev?.integration, current: next });
    }
    return entry;
  }

  remove(file: string): void {
    const prev = this.byFile.get(file);
    if (!prev) return;
    this.byFile.delete(file);
    if (prev.integration && this.byName.get(prev.integration.name) === prev) this.byName.delete(prev.integration.name);
    this.emit('change', { kind: 'removed', file, name: prev.name, previous: prev.integration });
  }

  /** A file's key in the registry: relative to the working directory when below it (as `validate` prints them). */
  display(path: string): string {
    const abs = resolve(path);
    const rel = abs.startsWith(`${process.cwd()}/`) ? abs.slice(process.cwd().length + 1) : abs;
    return rel;
  }
}

/** The header of a compiled version that cannot run (its name is taken). */
function headerOf(i: CompiledIntegration | undefined): FileHeader | undefined {
  return i && { name: i.name, enabled: i.enabled, triggerType: i.trigger.type };
}

/** Identity of a file's current content as far as stat can tell (inode, size, times). */
export function fileSignature(path: string): string | undefined {
  try {
    return statSignature(statSync(path));
  } catch {
    return undefined;
  }
}
