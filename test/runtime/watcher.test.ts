/** The folder watcher's events alone (no periodic rescan): edits in the folder and in folders below it, also ones created later. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IntegrationRegistry } from '../../src/runtime/registry.js';
import { FolderWatcher } from '../../src/runtime/watcher.js';

const file = (name: string, message: string) =>
  `name: ${name}\ntrigger: { type: webhook }\nsteps:\n  - { id: a, action: core.log, inputs: { message: ${message} } }\n`;

/** The message the running version of `name` logs. */
const message = (registry: IntegrationRegistry, name: string) => {
  const inputs = registry.get(name)?.steps[0]?.inputs;
  return inputs?.kind === 'object' ? (inputs.entries[0]?.[1] as { value?: unknown } | undefined)?.value : undefined;
};

async function until(what: () => unknown, expected: unknown): Promise<void> {
  const deadline = Date.now() + 5000;
  while (what() !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(what()).toBe(expected);
}

describe('FolderWatcher', () => {
  it('applies edits seen by its file watches, in the folder and in folders below it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcm-watch-'));
    mkdirSync(join(dir, 'team'));
    writeFileSync(join(dir, 'a.yaml'), file('top', 'one'));
    writeFileSync(join(dir, 'team', 'b.yaml'), file('nested', 'one'));
    const registry = new IntegrationRegistry(dir);
    await registry.loadAll();
    const watcher = new FolderWatcher(registry, { debounceMs: 20, rescanMs: 0 });
    watcher.start();
    try {
      writeFileSync(join(dir, 'a.yaml'), file('top', 'two'));
      await until(() => message(registry, 'top'), 'two');
      writeFileSync(join(dir, 'team', 'b.yaml'), file('nested', 'two'));
      await until(() => message(registry, 'nested'), 'two');
      // A folder created while watching: its file is found, and later edits of it are seen.
      mkdirSync(join(dir, 'later'));
      writeFileSync(join(dir, 'later', 'c.yaml'), file('late', 'one'));
      await until(() => message(registry, 'late'), 'one');
      await new Promise((r) => setTimeout(r, 100));
      writeFileSync(join(dir, 'later', 'c.yaml'), file('late', 'two'));
      await until(() => message(registry, 'late'), 'two');
    } finally {
      watcher.close();
    }
  });
});
