/** The integration registry over a real folder: names stay unique through renames and reloads. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IntegrationRegistry } from '../../src/runtime/registry.js';
import { FolderWatcher } from '../../src/runtime/watcher.js';

const file = (name: string, message: string) =>
  `name: ${name}\ntrigger: { type: webhook }\nsteps:\n  - { id: a, action: core.log, inputs: { message: ${message} } }\n`;

describe('IntegrationRegistry', () => {
  it('a file that loses its name to another stops running its old version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcm-registry-'));
    writeFileSync(join(dir, 'a.yaml'), file('first', 'a'));
    writeFileSync(join(dir, 'b.yaml'), file('xx', 'b'));
    const registry = new IntegrationRegistry(dir);
    await registry.loadAll();
    expect(registry.get('xx')?.file).toMatch(/b\.yaml$/);

    // a.yaml now claims "xx"; it comes first in path order, so b.yaml is the duplicate.
    writeFileSync(join(dir, 'a.yaml'), file('xx', 'a2'));
    await registry.loadAll();
    expect(registry.get('xx')?.file).toMatch(/a\.yaml$/);
    const b = registry.entries().find((e) => e.file.endsWith('b.yaml'))!;
    expect(b.integration).toBeUndefined();
    expect(b.problems[0]?.message).toMatch(/integration name "xx" is already used by/);
    expect(registry.get('first')).toBeUndefined();
  });

  it('an edit made after a file was read but before the watcher started is not lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcm-registry-'));
    writeFileSync(join(dir, 'a.yaml'), file('early', 'one'));
    const registry = new IntegrationRegistry(dir);
    await registry.loadAll();
    // The server is still starting (tokens, recovery…) when the file changes.
    writeFileSync(join(dir, 'a.yaml'), file('early', 'two-longer'));
    const watcher = new FolderWatcher(registry, { debounceMs: 10_000 });
    watcher.start();
    try {
      const result = watcher.scan();
      expect(result.reloaded).toEqual([expect.stringMatching(/a\.yaml$/)]);
      expect(JSON.stringify(registry.get('early')?.steps[0]?.inputs)).toContain('two-longer');
    } finally {
      watcher.close();
    }
  });
});
