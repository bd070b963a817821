/**
 * Loading integrations runs generated validators only (src/definition/generated/, `npm run docs`):
 * ajv's compiler is never loaded, so no schema is compiled on start-up. Checked in a fresh
 * process, since this test runner itself loads ajv elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allActions } from '../../src/connectors/catalog.js';
import { inputValidatorsModulePath, renderInputValidatorsModule } from '../../src/definition/validator-code.js';
import { readFileSync } from 'node:fs';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('precompiled validators', () => {
  it('loading and compiling the example integrations loads no ajv compiler', () => {
    const script = `
      import { createRequire } from 'node:module';
      import { listIntegrationFiles, loadFiles } from './src/definition/load.ts';
      const loaded = loadFiles(listIntegrationFiles(['integrations']).files);
      const compiler = Object.keys(createRequire(import.meta.url).cache).filter((k) => /ajv[\\\\/]dist[\\\\/](core|2020|compile)/.test(k));
      console.log(JSON.stringify({ ok: loaded.filter((l) => l.integration).length, files: loaded.length, compiler }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    expect(r.files).toBeGreaterThan(0);
    expect(r.ok).toBe(r.files);
    expect(r.compiler).toEqual([]);
  });

  it('the action input validators are current (run `npm run docs` when this fails)', () => {
    expect(
      readFileSync(inputValidatorsModulePath, 'utf8') === renderInputValidatorsModule(allActions),
      'src/definition/generated/input-validators.ts is stale',
    ).toBe(true);
  });
});
