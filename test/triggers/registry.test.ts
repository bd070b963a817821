/**
 * A trigger type is one folder listed once in src/triggers/registry.ts: nothing outside its
 * folder compares trigger type names (`=== 'poll'`, `case 'webhook':`) — the rest of the code
 * asks the integration's type (triggerTypeOf, acceptsWebhooks) or loops over triggerTypes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTriggerType, triggerTypes } from '../../src/triggers/registry.js';
import { SRC } from '../architecture/import-graph.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(p);
    return /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

const folders = readdirSync(join(SRC, 'triggers'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

/** Folder of src/triggers/ → the registered type its `type.ts` exports. */
const typeOfFolder = new Map<string, string | undefined>();
for (const folder of folders) {
  const exported = Object.values(await import(join(SRC, 'triggers', folder, 'type.ts')));
  typeOfFolder.set(folder, triggerTypes.find((t) => exported.includes(t))?.spec.type);
}
const folderType = (folder: string) => typeOfFolder.get(folder);

describe('trigger type registry', () => {
  const names = triggerTypes.map((t) => t.spec.type);

  it('lists each type once, each in its own folder', () => {
    expect(new Set(names).size).toBe(names.length);
    expect(folders.map(folderType).sort()).toEqual([...names].sort());
    for (const n of names) expect(findTriggerType(n)?.spec.type).toBe(n);
    expect(findTriggerType('nope')).toBeUndefined();
  });

  it('no module compares trigger type names outside the type’s own folder', () => {
    const alt = names.join('|');
    const comparison = new RegExp(`(?:[!=]==\\s*['"](${alt})['"]|['"](${alt})['"]\\s*[!=]==|case\\s+['"](${alt})['"]\\s*:)`, 'g');
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const rel = relative(SRC, file);
      const own = /^triggers\/([^/]+)\//.exec(rel)?.[1];
      const allowed = own ? folderType(own) : undefined;
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const m of line.matchAll(comparison)) {
          if ((m[1] ?? m[2] ?? m[3]) !== allowed) found.push(`${rel}:${i + 1}: ${line.trim()}`);
        }
      });
    }
    expect(found).toEqual([]);
  });
});
