/**
 * A test case's `trigger:` is checked and built by the integration's trigger type
 * (src/triggers/<type>/type.ts): the keys it may hold, poll's one-item rule in each mode, and
 * `expect.response` only where a caller is answered (the webhook-like types).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTestText } from '../../src/testing/load.js';
import { caseTrigger } from '../../src/testing/trigger.js';

const dir = mkdtempSync(join(tmpdir(), 'hcm-trigger-cases-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const integration = (name: string, trigger: string) =>
  writeFileSync(
    join(dir, `${name}.yaml`),
    `name: ${name}\ntrigger: ${trigger}\nsteps:\n  - { id: t, action: core.transform, inputs: { value: 1 } }\n`,
  );
integration('tick', '{ type: schedule, every: 1m }');
integration('each', '{ type: poll, every: 1m, action: core.transform, inputs: { value: [] }, key: "{% id %}", mode: each }');
integration('hook', '{ type: webhook }');

const problems = (text: string) => loadTestText('x.test.yaml', text, dir).problems.map((p) => p.message);

describe('test cases per trigger type', () => {
  it('a schedule case takes its tick, has no caller to answer', () => {
    expect(
      problems(`integration: tick
cases:
  - name: a
    trigger: { scheduledAt: "2026-01-01T00:00:00Z", body: {} }
    expect: { response: { statusCode: 200 } }
`),
    ).toEqual([
      'trigger.body does not apply to a schedule trigger; use scheduledAt, firedAt',
      'expect.response applies to webhook and appEvent triggers only; a schedule trigger has no caller to answer',
    ]);
  });

  it('a poll in each mode takes one item', () => {
    expect(problems(`integration: each\ncases:\n  - name: a\n    trigger: { items: [1, 2] }\n`)).toEqual([
      'a poll in each mode runs one execution per item: give the one item as trigger.item (one case per item)',
    ]);
    expect(problems(`integration: each\ncases:\n  - name: a\n    trigger: { item: 1, scheduledAt: "2026-01-01T00:00:00Z" }\n`)).toEqual([
      'trigger.scheduledAt does not apply to a poll in each mode; use item, items',
    ]);
  });

  it('each type builds $trigger as its trigger does', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const suite = (name: string) => loadTestText('x.test.yaml', `integration: ${name}\ncases:\n  - name: a\n`, dir).suite!;
    expect(await caseTrigger(suite('tick').integration, {}, 'id-1', now)).toEqual({
      scheduledAt: '2026-01-01T00:00:00.000Z',
      firedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await caseTrigger(suite('each').integration, { item: { id: 1 } }, 'id-1', now)).toEqual({
      item: { id: 1 },
      polledAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await caseTrigger(suite('hook').integration, { body: { a: 1 }, query: { q: 'x' } }, 'id-1', now)).toMatchObject({
      body: { data: { a: 1 }, contentType: 'application/json' },
      queryParameters: { q: 'x' },
      method: 'POST',
      executionId: 'id-1',
      webhookUrls: { live: 'http://hcm-runner.test/webhooks/hook', test: 'http://hcm-runner.test/webhooks/test/hook' },
    });
  });
});
