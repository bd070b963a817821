/**
 * No import cycles in src/: two modules that import each other (directly or round a loop) cannot
 * be understood, tested or moved one without the other. Counted as madge counts them — type-only
 * and dynamic imports included (import-graph.ts).
 *
 * KNOWN_CYCLES lists the cycles that existed when this test was written; each is to be broken and
 * then deleted from the list (the test fails while a listed cycle no longer exists, so the list
 * only shrinks). A new cycle is never added here: break it.
 */
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from './import-graph.js';

const KNOWN_CYCLES: string[][] = [];

const key = (cycle: string[]) => cycle.join(' ↔ ');

describe('import cycles in src/', () => {
  const cycles = importCycles(importGraph('all'));

  it('finds none but the known ones', () => {
    const known = new Set(KNOWN_CYCLES.map(key));
    expect(cycles.map(key).filter((c) => !known.has(c))).toEqual([]);
  });

  it('lists only cycles that still exist (delete a broken one from KNOWN_CYCLES)', () => {
    const found = new Set(cycles.map(key));
    expect(KNOWN_CYCLES.map(key).filter((c) => !found.has(c))).toEqual([]);
  });

  it('the reader sees type-only, re-exported and dynamic imports', () => {
    const graph = importGraph('all');
    expect(graph.get('runtime/trigger-lifecycle.ts')).toContain('runtime/registry.ts'); // import type
    expect(graph.get('runtime/index.ts')).toContain('runtime/runtime.ts'); // export … from
    expect(graph.get('triggers/schedule/type.ts')).toContain('triggers/schedule/start.ts'); // import('…')
    const loaded = importGraph('loaded');
    expect(loaded.get('runtime/trigger-lifecycle.ts')).not.toContain('runtime/registry.ts');
    expect(loaded.get('triggers/schedule/type.ts')).not.toContain('triggers/schedule/start.ts');
  });
});
