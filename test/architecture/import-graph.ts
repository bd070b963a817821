/**
 * The import graph of src/, read from the source text with two regular expressions: static
 * `import … from` / `export … from` / side-effect imports of relative modules, and dynamic
 * `import('…')` with a literal path. Two views:
 * - `loaded` (what importing a module loads): static imports that bring values. Type-only imports
 *   (`import type`, `export type`, every name marked `type`) are erased by the compiler, and a
 *   dynamic import loads its module only when that code runs — which is how run-time parts stay
 *   out of `validate`.
 * - `all` (what a module depends on, as madge sees it): every import, type-only and dynamic
 *   included. Import cycles are looked for in this view: a cycle of types or of lazy loads is
 *   still two modules that cannot be understood, or moved, one without the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Module path relative to src/ (e.g. `runtime/runtime.ts`) → the modules it imports at run time. */
export type ImportGraph = Map<string, string[]>;

// An import clause holds names, braces, commas and `* as`: never quotes, parentheses or `=`, so a
// dynamic `import('…')` inside an `export const` is not taken for a static import.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?([^'";()=]*?)\s*(?:from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

export function importGraph(view: 'loaded' | 'all', root = SRC): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(root)) {
    const from = relative(root, file);
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const m of text.matchAll(STATEMENT)) {
      const [, kind, typeOnly, clause, spec] = m;
      if (view === 'loaded' && (typeOnly || onlyTypes(clause!))) continue;
      if (kind === 'export' && !clause) continue; // not a re-export
      const target = resolveModule(root, file, spec!);
      if (target) targets.add(target);
    }
    if (view === 'all') {
      for (const m of text.matchAll(DYNAMIC)) {
        const target = resolveModule(root, file, m[1]!);
        if (target) targets.add(target);
      }
    }
    graph.set(from, [...targets]);
  }
  return graph;
}

/** `{ type A, type B }` brings no value; `X, { type A }` and `* as X` do. */
function onlyTypes(clause: string): boolean {
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** The module under src/ that `spec` names; undefined for data files (JSON) and anything outside src/. */
function resolveModule(root: string, file: string, spec: string): string | undefined {
  if (!spec.endsWith('.js')) return undefined;
  const abs = resolve(dirname(file), spec).replace(/\.js$/, '');
  for (const ext of ['.ts', '.tsx', '/index.ts']) {
    const candidate = relative(root, abs + ext);
    try {
      readFileSync(join(root, candidate));
      return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${relative(root, file)} imports ${spec}, which is not a module under src/`);
}

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every module `entry` loads, directly or through others, when it is imported. */
export function reachable(graph: ImportGraph, entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const m = stack.pop()!;
    if (seen.has(m)) continue;
    seen.add(m);
    stack.push(...(graph.get(m) ?? []));
  }
  return seen;
}

/** The import cycles: each strongly connected group of two or more modules (or one importing itself), sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || graph.get(v)?.includes(v)) out.push(group.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
