/**
 * Webhook intake on plain objects, without an HTTP server: a real Runtime over SQLite behind the
 * intake host (src/runtime/webhook-intake.ts), requests as `IntakeRequest`s. What the HTTP tests
 * cannot see: which rejections happen before the body is read at all, and that no rejection
 * leaves an execution or a listening-mode capture behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../src/triggers/webhook/hmac.js';
import {
  handleWebhook,
  LIVE_ROUTE,
  TEST_ROUTE,
  type IntakeRequest,
  type IntakeResponse,
  type WebhookIntakeHost,
} from '../../src/triggers/webhook/intake.js';
import { webhookIntakeHost } from '../../src/runtime/webhook-intake.js';
import { startRuntime, tempDir, write, type TestRuntime } from './helpers.js';

const HMAC = { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' } as const;

const dir = tempDir('hcm-intake-');
const data = tempDir('hcm-intake-data-');
let t: TestRuntime;
let host: WebhookIntakeHost;
const token = (name: string) => t.runtime.tokens.cachedToken(name)!;

beforeAll(async () => {
  /** One webhook integration whose single step returns the body; `head` and `trigger` are YAML lines. */
  const webhook = (name: string, trigger: string[], head: string[] = []) =>
    write(
      dir.path,
      `${name}.yaml`,
      [
        `name: ${name}`,
        ...head,
        'trigger:',
        '  type: webhook',
        ...trigger.map((l) => `  ${l}`),
        'steps:',
        '  - id: done',
        '    action: core.transform',
        '    inputs:',
        '      value: "{% $trigger.body.data %}"',
        '',
      ].join('\n'),
    );
  webhook('hook', ['methods: [POST]', 'maxBodyBytes: 64']);
  webhook('off', [], ['enabled: false']);
  for (const [name, env] of [
    ['signed', 'SIGNED_SECRET'],
    ['unsigned', 'EMPTY_SECRET'],
  ]) {
    webhook(name!, ['hmac:', `  secret: { env: ${env} }`, '  header: x-signature', '  algorithm: sha256', '  encoding: hex', '  prefix: "sha256="']);
  }
  t = await startRuntime(dir.path, data.path, '2026-01-05T09:00:00Z', { env: { SIGNED_SECRET: 's3cret', EMPTY_SECRET: '' } });
  host = webhookIntakeHost(t.runtime);
  // Listening: a test-URL request that got as far as the capture would leave one behind.
  for (const name of ['hook', 'signed', 'unsigned', 'off']) await t.runtime.setListening(name, true);
});

afterAll(async () => {
  await t?.stop();
  dir.remove();
  data.remove();
});

/** A request whose body reader counts its calls. */
function request(path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): IntakeRequest & { reads: number[] } {
  const reads: number[] = [];
  return {
    reads,
    method: opts.method ?? 'POST',
    path,
    query: '',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: async (limit) => {
      reads.push(limit);
      return Buffer.from(opts.body ?? '{}');
    },
  };
}

function errorOf(r: IntakeResponse): string {
  return JSON.parse(String(r.body)).error;
}

async function recorded(): Promise<{ executions: number; captures: number }> {
  const executions = (await t.store.listExecutions({ limit: 500 })).length;
  let captures = 0;
  for (const name of ['hook', 'signed', 'unsigned', 'off']) captures += (await t.store.listCaptures(name, 500)).length;
  return { executions, captures };
}

describe('webhook intake on plain requests', () => {
  it('every rejection is a plain {error} response, reads the body only when it must, and records nothing', async () => {
    const before = await recorded();
    const sig = (body: string, secret: string) => signHmac(HMAC, secret, body);
    const cases: Array<{
      what: string;
      req: ReturnType<typeof request>;
      status: number;
      error: RegExp;
      headers?: Record<string, string>;
      readsBody: boolean;
      route?: string;
    }> = [
      { what: 'unknown token', req: request('not-a-token/x'), status: 404, error: /no webhook at this URL/, readsBody: false },
      {
        what: 'unknown token on the test URL',
        req: request('test/not-a-token'),
        status: 404,
        error: /no webhook at this URL/,
        readsBody: false,
        route: TEST_ROUTE,
      },
      { what: 'disabled live URL', req: request(token('off')), status: 404, error: /disabled; its test URL still works/, readsBody: false },
      {
        what: 'method not allowed',
        req: request(`test/${token('hook')}`, { method: 'get' }),
        status: 405,
        error: /method GET is not allowed.*use POST/,
        headers: { allow: 'POST' },
        readsBody: false,
        route: TEST_ROUTE,
      },
      {
        what: 'declared body past maxBodyBytes',
        req: request(`test/${token('hook')}`, { headers: { 'content-length': '65' } }),
        status: 413,
        error: /limit of 64 bytes/,
        headers: { connection: 'close' },
        readsBody: false,
        route: TEST_ROUTE,
      },
      {
        what: 'malformed JSON',
        req: request(`test/${token('hook')}`, { body: '{"a":' }),
        status: 400,
        error: /malformed JSON/,
        readsBody: true,
        route: TEST_ROUTE,
      },
      {
        what: 'wrong signature',
        req: request(`test/${token('signed')}`, { body: '{"a":1}', headers: { 'x-signature': sig('{"a":1}', 'wrong') } }),
        status: 401,
        error: /signature rejected/,
        readsBody: true,
        route: TEST_ROUTE,
      },
      {
        what: 'empty signing secret',
        req: request(`test/${token('unsigned')}`, { body: '{}', headers: { 'x-signature': sig('{}', '') } }),
        status: 500,
        error: /signing secret is not configured/,
        readsBody: true,
        route: TEST_ROUTE,
      },
    ];
    for (const c of cases) {
      const r = await handleWebhook(c.req, host);
      expect({ what: c.what, status: r.status, route: r.route }).toEqual({ what: c.what, status: c.status, route: c.route ?? LIVE_ROUTE });
      expect(r.headers['content-type'], c.what).toBe('application/json');
      expect(errorOf(r), c.what).toMatch(c.error);
      for (const [k, v] of Object.entries(c.headers ?? {})) expect(r.headers[k], c.what).toBe(v);
      // A reader is only ever asked for the webhook's own limit.
      expect(c.req.reads, c.what).toEqual(c.readsBody ? [c.what === 'malformed JSON' ? 64 : 6 * 1024 * 1024] : []);
      expect(await recorded(), c.what).toEqual(before);
    }
  });

  it('bytes past maxBodyBytes given as a Buffer are 413 too', async () => {
    const before = await recorded();
    const big = Buffer.alloc(65, 'a');
    const asBytes = await handleWebhook({ method: 'POST', path: token('hook'), query: '', headers: {}, body: big }, host);
    expect([asBytes.status, asBytes.headers.connection, errorOf(asBytes)]).toEqual([
      413,
      'close',
      "request body exceeds this webhook's limit of 64 bytes (maxBodyBytes)",
    ]);
    expect(await recorded()).toEqual(before);
  });

  it('an accepted test-URL request is captured and recorded before it is answered', async () => {
    const req = request(`test/${token('hook')}/a%20b`, { body: '{"n":1}' });
    req.query = 'x=1';
    const r = await handleWebhook(req, host);
    expect(r.status).toBe(200);
    expect(r.route).toBe(TEST_ROUTE);
    expect(r.integration).toBe('hook');
    const { executionId } = JSON.parse(String(r.body));
    expect(r.headers['x-execution-id']).toBe(executionId);
    expect(req.reads).toEqual([64]);
    // Recorded when the answer exists (the store committed before handleWebhook returned).
    const stored = await t.store.getExecution(executionId);
    expect(stored).toMatchObject({
      integration: 'hook',
      test: true,
      trigger: { pathFragment: 'a b', queryParameters: { x: '1' }, body: { data: { n: 1 } } },
    });
    const captures = await t.store.listCaptures('hook', 10);
    expect(captures.map((c) => (c.trigger as { executionId: string }).executionId)).toEqual([executionId]);
  });

  it('a runner that is shutting down answers 503 with Retry-After and records nothing', async () => {
    const before = await recorded();
    await t.runtime.dispatcher.stop(2000);
    const req = request(token('hook'), { body: '{"n":2}' });
    const r = await handleWebhook(req, host);
    expect([r.status, r.headers['retry-after'], errorOf(r)]).toEqual([503, '5', 'the runner is shutting down; retry shortly']);
    // Refused before the body was read.
    expect(req.reads).toEqual([]);
    expect(await recorded()).toEqual(before);
  });
});
