/**
 * Loads integration files and folders: read, parse with positions, compile. Two files with the
 * same `name` are a problem of the later one (in path order).
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync, type Stats } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { checkCalls } from './calls.js';
import { compileIntegration } from './compile.js';
import { DEFAULT_FILE_LIMITS, formatBytes, type FileLimits } from './limits.js';
import type { CompiledIntegration, Problem, SourcePosition } from './types.js';
import { parseYamlSource } from './yaml-source.js';

export interface LoadedFile {
  file: string;
  integration?: CompiledIntegration;
  problems: Problem[];
  /** Where `name:` is written, to point a duplicate-name problem at it. */
  namePosition?: SourcePosition;
  /** For a file that does not compile: what could still be read of it (listings name it by this). */
  header?: FileHeader;
  /** loadFile: the file's `statSignature` as it was opened, before it was read (undefined if it could not be opened). */
  signature?: string;
}

/** Identity of a file's content as far as stat can tell (inode, size, times): what the watcher compares. */
export function statSignature(st: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** `name`, `enabled` and `trigger.type` of a file, as far as they can be read. */
export interface FileHeader {
  name?: string;
  enabled?: boolean;
  triggerType?: string;
}

/** `*.test.yaml` / `*.test.yml`: integration test files (docs/testing.md), never integrations. */
export function isTestFile(name: string): boolean {
  return /\.test\.ya?ml$/i.test(name) && !name.startsWith('.');
}

export function isIntegrationFile(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.') && !isTestFile(name);
}

/** Parses and compiles one file's text; `file` is how it is named in problems. */
export function loadText(file: string, text: string, limits: FileLimits = DEFAULT_FILE_LIMITS): LoadedFile {
  const src = parseYamlSource(file, text);
  const { integration, problems } = compileIntegration(src, limits);
  if (!integration) return { file, problems, header: fileHeader(src.value, text) };
  return { file, integration, problems, namePosition: src.positionOf('/name') };
}

/** The header of a file that did not compile, from the value already parsed (never a second parse). */
function fileHeader(value: unknown, text: string): FileHeader | undefined {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const doc = value as Record<string, unknown>;
    const trigger = doc.trigger as Record<string, unknown> | undefined;
    return {
      name: typeof doc.name === 'string' ? doc.name : undefined,
      enabled: typeof doc.enabled === 'boolean' ? doc.enabled : undefined,
      triggerType: trigger && typeof trigger.type === 'string' ? trigger.type : undefined,
    };
  }
  // Not even YAML: a line match for the name.
  const m = /^name:\s*["']?([A-Za-z0-9][A-Za-z0-9_.-]*)["']?\s*(?:#.*)?$/m.exec(text);
  return m ? { name: m[1] } : undefined;
}

export function loadFile(path: string, displayPath = displayName(path), limits: FileLimits = DEFAULT_FILE_LIMITS): LoadedFile {
  let signature: string | undefined;
  const read = readIntegrationText(path, limits.maxFileBytes, (st) => (signature = statSignature(st)));
  const loaded: LoadedFile =
    typeof read === 'string'
      ? loadText(displayPath, read, limits)
      : { file: displayPath, problems: [{ file: displayPath, line: 1, column: 1, message: read.problem, path: '' }] };
  if (signature !== undefined) loaded.signature = signature;
  return loaded;
}

/**
 * The file's text, or why it is not read: its size is checked before reading (a 50 MB file is
 * never read into memory), and at most `maxBytes + 1` bytes are read should it grow meanwhile.
 * `onStat` sees the stat of each opening, taken before reading.
 */
export function readIntegrationText(path: string, maxBytes: number, onStat?: (st: Stats) => void): string | { problem: string } {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const st = fstatSync(fd);
    onStat?.(st);
    if (!st.isFile()) return { problem: 'cannot read file: not a regular file' };
    const tooLarge = (size: number) => ({
      problem: `the file is ${bytes(size)}; integration files may be at most ${bytes(maxBytes)} (${formatBytes(maxBytes)}, HCM_RUNNER_MAX_FILE_BYTES) — split it into several integrations or move data out of it`,
    });
    if (st.size > maxBytes) return tooLarge(st.size);
    const buf = Buffer.allocUnsafe(st.size + 1); // one byte more: a file that grew shows it
    let length = 0;
    for (let n; length < buf.length && (n = readSync(fd, buf, length, buf.length - length, null)) > 0; ) length += n;
    if (length > st.size) return readIntegrationText(path, maxBytes, onStat); // it grew while read: again, from its new size
    return buf.toString('utf8', 0, length);
  } catch (err) {
    return { problem: `cannot read file: ${(err as Error).message}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Every *.yaml / *.yml below the given files and folders, sorted; test files (*.test.yaml) are not integrations. */
export function listIntegrationFiles(paths: string[]): { files: string[]; missing: string[] } {
  return listFiles(paths, isIntegrationFile, (file) => !isTestFile(basename(file)));
}

/** Every *.test.yaml / *.test.yml below the given files and folders, sorted. */
export function listTestFiles(paths: string[]): { files: string[]; missing: string[] } {
  return listFiles(paths, isTestFile, (file) => isTestFile(basename(file)));
}

/** Files below folders that `accept` by name; files named directly when `given` takes them. */
function listFiles(paths: string[], accept: (name: string) => boolean, given: (file: string) => boolean): { files: string[]; missing: string[] } {
  const files: string[] = [];
  const missing: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && accept(entry.name)) files.push(full);
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      missing.push(p);
      continue;
    }
    if (st.isDirectory()) walk(p);
    else if (given(p)) files.push(p);
  }
  return { files, missing };
}

/** Loads many files and reports duplicate names on the later file. */
export function loadFiles(files: string[], limits: FileLimits = DEFAULT_FILE_LIMITS): LoadedFile[] {
  const loaded = files.map((f) => loadFile(f, undefined, limits));
  markDuplicateNames(loaded);
  checkCalls(loaded);
  return loaded;
}

export function markDuplicateNames(loaded: LoadedFile[]): void {
  const firstByName = new Map<string, string>();
  for (const l of loaded) {
    const name = l.integration?.name;
    if (!name) continue;
    const first = firstByName.get(name);
    if (first === undefined) {
      firstByName.set(name, l.file);
      continue;
    }
    const { line, column } = l.namePosition ?? { line: 1, column: 1 };
    l.problems.push({
      file: l.file,
      line,
      column,
      message: `integration name "${name}" is already used by ${first}; names must be unique — rename one of them`,
      path: '/name',
    });
    l.header = { name, enabled: l.integration!.enabled, triggerType: l.integration!.trigger.type };
    l.integration = undefined;
  }
}

const bytes = (n: number) => `${n.toLocaleString('en-US')} bytes`;

function displayName(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
