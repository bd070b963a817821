/**
 * The stored trigger of a JSON webhook is made from the caller's own body text (trigger-data.ts):
 * it must read back as the `$trigger` the run saw, whatever the text looks like.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triggerJson } from '../../src/common/trigger-json.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { buildWebhookTrigger } from '../../src/triggers/webhook/trigger-data.js';

const ctx = {
  webhookUrls: { live: 'http://x/webhooks/t', test: 'http://x/webhooks/test/t' },
  executionId: 'e-1',
  receivedAt: '2026-11-22T10:00:00.000Z',
};

function trigger(body: string | Buffer, contentType = 'application/json') {
  return buildWebhookTrigger(
    {
      method: 'POST',
      pathFragment: 'a/b',
      query: 'x=1&x=2',
      headers: { 'content-type': contentType, authorization: 'Bearer secret', 'x-tag': 'v' },
      rawBody: Buffer.from(body),
    },
    ctx,
  );
}

const BODIES: Array<[string, string | Buffer, string?]> = [
  ['compact', '{"data":{"workerId":"w1","n":[1,2.5,-3e2,true,null]}}'],
  ['pretty-printed, with surrounding white space', '\n  {\n    "a" : [ 1 , 2 ] ,\n    "b" : { }\n  }\n\t'],
  ['a repeated key (the last one wins)', '{"a":1,"a":2,"b":{"c":1,"c":{"d":3}}}'],
  ['escapes and non-ASCII text', '{"s":"\\u00e9\\n\\"q\\" \\\\ \\ud83d\\ude00 é 😀 \\u2028","lone":"\\ud800"}'],
  ['keys that are names of Object.prototype', '{"__proto__":{"x":1},"constructor":"c","toString":2}'],
  ['a scalar body', '  "just a string"  '],
  ['a number body beyond double precision', '12345678901234567890123'],
  ['Latin-1 text declared by charset', Buffer.from('{"name":"Ren\xe9"}', 'latin1'), 'application/json; charset=iso-8859-1'],
];

describe('the stored trigger of a JSON webhook', () => {
  for (const [what, body, contentType] of BODIES) {
    it(`reads back as the trigger the run saw: ${what}`, () => {
      const t = trigger(body, contentType);
      const text = triggerJson(t);
      expect(JSON.parse(text)).toEqual(t);
      // The same keys in the same order as JSON.stringify gives: the API shows it unchanged.
      expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(t));
      expect(JSON.parse(text).headers.authorization).toBe('[redacted]');
    });
  }

  it('is serialised as a whole for other bodies (form fields, text)', () => {
    const form = trigger('a=1&b=2', 'application/x-www-form-urlencoded');
    expect(triggerJson(form)).toBe(JSON.stringify(form));
    const text = trigger('hello', 'text/plain');
    expect(triggerJson(text)).toBe(JSON.stringify(text));
  });

  describe('through the store', () => {
    let dir: string;
    let store: SqliteStore;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'trigger-json-'));
      store = await SqliteStore.open(dir, { tokenKey: Buffer.alloc(32, 7) });
    });
    afterAll(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('is the trigger the API reads back', async () => {
      const t = trigger('{ "a": 1, "a": [ {"b" : "\\u00e9"} ] }');
      await store.enqueue([{ id: 'tj-1', integration: 'tj', trigger: t, test: false, attempt: 1, queuedAt: ctx.receivedAt }]);
      const stored = await store.getExecution('tj-1');
      expect(stored!.trigger).toEqual(t);
      expect((stored!.trigger as { body: { data: unknown } }).body.data).toEqual({ a: [{ b: 'é' }] });
    });
  });
});
