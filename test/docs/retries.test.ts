/**
 * What the docs say a step's `retry` repeats is what the engine repeats: 408 (HCM), 429 and 5xx
 * answers, never another 4xx. The answers are the connectors' own errors for those statuses.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runExecution } from '../../src/engine/run.js';
import { mockedError } from '../../src/testing/mocks.js';
import { manualTriggerData } from '../../src/triggers/manual.js';
import { repoRoot } from '../helpers/cli.js';
import { compile, testServices } from '../helpers/engine.js';

const statuses = [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503];

/** The statuses after which a step with `retry` made a second attempt. */
async function retried(action: string, inputs: string): Promise<number[]> {
  const connection = action.startsWith('hcm.')
    ? 'connections:\n  hcm: { type: hcm-oauth2, authorizeUrl: http://127.0.0.1:9/a, tokenUrl: http://127.0.0.1:9/t, apiUrl: http://127.0.0.1:9, tenantId: t, clientId: c, clientSecret: s }\n'
    : '';
  const integration = compile(
    `name: t\n${connection}trigger: { type: webhook }\nsteps:\n  - id: s\n    action: ${action}\n    retry: { maxAttempts: 2, delayMs: 0 }\n    inputs: ${inputs}\n`,
  );
  const out: number[] = [];
  for (const status of statuses) {
    const r = await runExecution({
      integration,
      trigger: manualTriggerData(integration, {}),
      services: testServices(),
      invoke: async (call) => {
        throw mockedError(action, { statusCode: status, message: 'no' }, call.inputs);
      },
      sleep: async () => {},
    });
    if (r.steps[0]!.attempts === 2) out.push(status);
  }
  return out;
}

it('a step retry repeats 408 (HCM), 429 and 5xx answers and no other 4xx', async () => {
  expect(await retried('hcm.getWorkerById', '{ workerId: w1 }')).toEqual([408, 429, 500, 502, 503]);
  expect(await retried('core.http', '{ url: "http://127.0.0.1:9/x" }')).toEqual([429, 500, 502, 503]);
});

it('the docs say so, and nowhere that a step retry repeats other 4xx answers', () => {
  const authoring = readFileSync(join(repoRoot, 'docs/authoring.md'), 'utf8');
  const testing = readFileSync(join(repoRoot, 'docs/testing.md'), 'utf8');
  const rule =
    /Only failures another attempt could change are\s+retried: ([^.]*)\. A 404 or other\s+4xx answer[\s\S]{0,200}?fail the step at once/.exec(
      authoring,
    );
  expect(rule, 'docs/authoring.md §7 states which failures a step retry repeats').not.toBeNull();
  expect(rule![1]).toMatch(/429/);
  expect(rule![1]).toMatch(/5xx/);
  expect(rule![1]).toMatch(/408/);
  expect(testing).toMatch(/429, 408 and 5xx are retried by a step's `retry`; other statuses fail at once/);
  for (const [file, text] of [
    ['docs/authoring.md', authoring],
    ['docs/testing.md', testing],
  ] as const) {
    expect(text.replace(/\s+/g, ' '), file).not.toMatch(/step `?retry`? (also )?retries 4xx/);
  }
});
