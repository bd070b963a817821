/** Compiles inline YAML and runs it through the real engine. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RuntimeServices } from '../../src/connectors/types.js';
import { loadText } from '../../src/definition/load.js';
import type { CompiledIntegration } from '../../src/definition/types.js';
import { runExecution, type RunOptions } from '../../src/engine/run.js';
import { FileTokenStore } from '../../src/store/file-token-store.js';
import { manualTriggerData } from '../../src/triggers/manual.js';

export function compile(yaml: string): CompiledIntegration {
  const loaded = loadText('inline.yaml', yaml);
  expect(loaded.problems, JSON.stringify(loaded.problems, null, 2)).toEqual([]);
  return loaded.integration!;
}

export function testServices(): RuntimeServices {
  // Tests call small fakes on loopback: allowed here, as `serve --allow-private-network` does.
  return { tokens: new FileTokenStore(mkdtempSync(join(tmpdir(), 'hcm-tokens-'))), publicUrl: 'http://127.0.0.1:0', allowPrivateNetwork: true };
}

/** Runs a webhook integration with `payload` as its JSON body. */
export function run(yaml: string, payload: unknown = {}, opts: Partial<RunOptions> = {}) {
  const integration = compile(yaml);
  return runExecution({ integration, trigger: manualTriggerData(integration, payload), services: testServices(), ...opts });
}
