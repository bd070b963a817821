/** `idempotencyKey` + `dedupeWindow` as the loader compiles and checks them (problems at their line:col). */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import type { WebhookOptions } from '../../src/definition/types.js';
import { MAX_KEY_BYTES, storedKey } from '../../src/triggers/webhook/idempotency.js';
import { webhookOptions } from '../../src/triggers/webhook/spec.js';

const load = (keys: string, type = 'webhook') =>
  loadText('x.yaml', `name: t\ntrigger:\n  type: ${type}\n${keys}steps: [{ id: a, action: core.log, inputs: { message: x } }]\n`);
const idempotency = (r: ReturnType<typeof load>) => (r.integration!.trigger as WebhookOptions).idempotency;

describe('compile', () => {
  it("dedupeWindow defaults to the spec's 24h; webhook and appEvent triggers take both keys", () => {
    expect(webhookOptions.dedupeWindow!.default).toBe('24h');
    for (const type of ['webhook', 'appEvent']) {
      const r = load(`  idempotencyKey: "{% $trigger.headers.'webhook-id' %}"\n`, type);
      expect(r.problems).toEqual([]);
      expect(idempotency(r)).toMatchObject({ windowMs: 86_400_000, key: { kind: 'expr' } });
    }
    expect(idempotency(load('  idempotencyKey: "{% $trigger.body.data.id %}"\n  dedupeWindow: 1m\n'))!.windowMs).toBe(60_000);
    expect(idempotency(load('  idempotencyKey: "{% $trigger.body.data.id %}"\n  dedupeWindow: 30d\n'))!.windowMs).toBe(30 * 86_400_000);
    expect(idempotency(load(''))).toBeUndefined();
  });

  it('a window outside 1m–30d, a malformed one, one without a key, or a key that is no expression are problems at line:col', () => {
    for (const [keys, message, line, column] of [
      [
        '  idempotencyKey: "{% $trigger.body.data.id %}"\n  dedupeWindow: 59s\n',
        /dedupeWindow "59s" is out of range; write a duration from 1m to 30d/,
        5,
        17,
      ],
      ['  idempotencyKey: "{% $trigger.body.data.id %}"\n  dedupeWindow: 31d\n', /out of range/, 5, 17],
      ['  idempotencyKey: "{% $trigger.body.data.id %}"\n  dedupeWindow: 1 day\n', /dedupeWindow/, 5, 17],
      ['  dedupeWindow: 1h\n', /dedupeWindow applies only with an idempotencyKey/, 4, 3],
      ['  idempotencyKey: webhook-id\n', /idempotencyKey/, 4, 19],
    ] as const) {
      const r = load(keys);
      expect(r.integration, keys).toBeUndefined();
      expect(r.problems[0]!.message, keys).toMatch(message);
      expect([r.problems[0]!.line, r.problems[0]!.column], keys).toEqual([line, column]);
    }
  });
});

describe('storedKey', () => {
  it('keeps keys up to 512 UTF-8 bytes and hashes longer ones (sha256)', () => {
    expect(MAX_KEY_BYTES).toBe(512);
    expect(storedKey('a'.repeat(512))).toBe('a'.repeat(512));
    // 256 two-byte characters are 512 bytes; one more is past the bound though only 257 characters.
    expect(storedKey('ż'.repeat(256))).toBe('ż'.repeat(256));
    const long = 'ż'.repeat(257);
    expect(storedKey(long)).toBe(`sha256:${createHash('sha256').update(long, 'utf8').digest('hex')}`);
  });
});
