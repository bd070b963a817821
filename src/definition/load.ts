/**
 * Loads integration files and folders: read, parse with positions, compile. Two files with the
 * same `name` are a problem of the later one (in path order).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { compileIntegration } from './compile.js';
import type { CompiledIntegration, Problem, SourcePosition } from './types.js';
import { parseYamlSource } from './yaml-source.js';

export interface LoadedFile {
  file: string;
  integration?: CompiledIntegration;
  problems: Problem[];
  /** Where `name:` is written, to point a duplicate-name problem at it. */
  namePosition?: SourcePosition;
}

/** `*.test.yaml` / `*.test.yml`: integration test files (docs/testing.md), never integrations. */
export function isTestFile(name: string): boolean {
  return /\.test\.ya?ml$/i.test(name) && !name.startsWith('.');
}

export function isIntegrationFile(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.') && !isTestFile(name);
}

/** Parses and compiles one file's text; `file` is how it is named in problems. */
export function loadText(file: string, text: string): LoadedFile {
  const src = parseYamlSource(file, text);
  const { integration, problems } = compileIntegration(src);
  return { file, integration, problems, namePosition: integration ? src.positionOf('/name') : undefined };
}

export function loadFile(path: string, displayPath = displayName(path)): LoadedFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { file: displayPath, problems: [{ file: displayPath, line: 1, column: 1, message: `cannot read file: ${(err as Error).message}`, path: '' }] };
  }
  return loadText(displayPath, text);
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
export function loadFiles(files: string[]): LoadedFile[] {
  const loaded = files.map((f) => loadFile(f));
  markDuplicateNames(loaded);
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
    l.problems.push({ file: l.file, line, column, message: `integration name "${name}" is already used by ${first}; names must be unique — rename one of them`, path: '/name' });
    l.integration = undefined;
  }
}

function displayName(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
