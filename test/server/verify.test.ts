/**
 * `verify:` over HTTP: the runner serving test/fixtures/server/verify/, requests signed by the
 * senders' own libraries (standardwebhooks, stripe, @octokit/webhooks-methods) or Slack's
 * documented example. Good signatures run; bad, expired, future-dated and malformed ones answer a
 * generic 401 (the reason goes to the log only) and create no execution.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, startTestServer, type TestServer } from './helpers.js';

const SW_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const STRIPE_SECRET = 'whsec_stripe_endpoint_secret_for_tests';
const GITHUB_SECRET = 'github webhook secret';
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const HMAC_SECRET = 'shared-hmac-key';

const stripe = new Stripe('sk_test_unused');
const sw = new Webhook(SW_SECRET);
const logLines: Array<Record<string, unknown>> = [];
let s: TestServer;

beforeAll(async () => {
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  s = await startTestServer({
    dir: join(fixtures, 'verify'),
    logger,
    env: { SW_SECRET, STRIPE_SECRET, GITHUB_SECRET, SLACK_SECRET, HMAC_SECRET },
  });
});
afterAll(async () => {
  await s?.stop();
});

const nowS = () => Math.floor(Date.now() / 1000);
const payload = JSON.stringify({ type: 'worker.terminated', data: { workerId: 21001 } });

async function post(integration: string, headers: Record<string, string>, body: string = payload, contentType = 'application/json') {
  return fetch(s.urls(integration).live, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
}

async function count(integration: string): Promise<number> {
  const r = await s.api('GET', `/executions?integration=${integration}&limit=500`);
  expect(r.status).toBe(200);
  return r.body.length;
}

/** Accepted: 200 {executionId}, and the execution ran on the body as sent. */
async function expectRun(res: Response, result: unknown = JSON.parse(payload)) {
  expect(res.status).toBe(200);
  const { executionId } = (await res.json()) as { executionId: string };
  const record = await s.waitForExecution(executionId);
  expect(record.status).toBe('succeeded');
  expect(record.result).toEqual(result);
}

/** Refused: a generic 401, no execution, and the reason (matching `reason`) in the log only. */
async function expectRefusals(integration: string, attempts: Array<[Record<string, string>, RegExp]>, body?: string) {
  const before = await count(integration);
  for (const [headers, reason] of attempts) {
    const from = logLines.length;
    const res = await post(integration, headers, body);
    expect(res.status, JSON.stringify(headers).slice(0, 200)).toBe(401);
    expect(res.headers.get('x-execution-id')).toBeNull();
    expect(await res.json()).toEqual({ error: 'request signature rejected' });
    const logged = logLines.slice(from).find((l) => l.msg === 'webhook signature rejected');
    expect(logged, `a log line for ${JSON.stringify(headers).slice(0, 200)}`).toMatchObject({ integration, reason: expect.stringMatching(reason) });
  }
  expect(await count(integration)).toBe(before);
}

describe('standard-webhooks', () => {
  const signed = (at = nowS(), id = `msg_${randomBytes(8).toString('hex')}`, body: string = payload) => ({
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': sw.sign(id, new Date(at * 1000), body),
  });

  it('a request signed by the standardwebhooks library runs', async () => {
    await expectRun(await post('standard-webhooks', signed()));
  });

  it('the raw bytes are what is signed, not a re-serialisation of the parsed JSON', async () => {
    const raw = '{ "b":1,\n  "a" : "\\u00e9t\u00e9" }';
    await expectRun(await post('standard-webhooks', signed(nowS(), 'msg_raw', raw), raw), { b: 1, a: 'été' });
  });

  it('bad, expired, future-dated and malformed signatures → 401, no execution', async () => {
    const good = signed();
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(
      good['webhook-id'],
      new Date(Number(good['webhook-timestamp']) * 1000),
      payload,
    );
    await expectRefusals('standard-webhooks', [
      [{}, /missing header webhook-id/],
      [{ ...good, 'webhook-signature': other }, /no v1 signature matches/],
      [{ ...good, 'webhook-id': 'msg_replayed_with_another_id' }, /no v1 signature matches/],
      [signed(nowS() - 6 * 60), /older/],
      [signed(nowS() + 6 * 60), /future/],
      [{ ...good, 'webhook-signature': good['webhook-signature'].replace('v1,', 'v2,') }, /no v1 signature/],
      [{ ...good, 'webhook-signature': 'v1,%%%%not-base64%%%%' }, /no v1 signature matches/],
      [{ ...good, 'webhook-signature': Array(2_000).fill('v1,a').join(' ') }, /longer than/],
      [{ ...good, 'webhook-signature': `${Array(40).fill('v1,a').join(' ')} ${good['webhook-signature']}` }, /more than 32 signatures/],
    ]);
  });
});

describe('listening mode', () => {
  it('a refused test-URL request leaves no capture; an accepted one does', async () => {
    expect((await s.api('POST', '/integrations/github/listen')).status).toBe(200);
    try {
      const url = s.urls('github').test;
      const send = async (signature: string) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: payload });
      expect((await send(await githubSign('wrong secret', payload))).status).toBe(401);
      expect((await s.api('GET', '/integrations/github/captures')).body).toEqual([]);
      expect((await send(await githubSign(GITHUB_SECRET, payload))).status).toBe(200);
      expect((await s.api('GET', '/integrations/github/captures')).body).toHaveLength(1);
    } finally {
      await s.api('DELETE', '/integrations/github/listen');
    }
  });
});

describe('stripe', () => {
  const header = (timestamp = nowS(), secret = STRIPE_SECRET) => stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

  it('a request signed by stripe.webhooks.generateTestHeaderString runs, also with a second (rolled) v1', async () => {
    await expectRun(await post('stripe', { 'stripe-signature': header() }));
    const old = header(nowS(), 'whsec_previous').split(',')[1];
    await expectRun(await post('stripe', { 'stripe-signature': `${header()},${old}` }));
  });

  it('bad, expired, future-dated and malformed signatures → 401, no execution', async () => {
    await expectRefusals('stripe', [
      [{}, /missing header stripe-signature/],
      [{ 'stripe-signature': header(nowS(), 'whsec_wrong') }, /no v1 signature matches/],
      [{ 'stripe-signature': header(nowS() - 6 * 60) }, /older/],
      [{ 'stripe-signature': header(nowS() + 6 * 60) }, /future/],
      [{ 'stripe-signature': header().replace('v1=', 'v0=') }, /no v1 signature/],
      [{ 'stripe-signature': header().replace(',v1=', ';v1=') }, /no v1 signature/],
      [{ 'stripe-signature': `t=${nowS()},${Array(2_000).fill('v1=ab').join(',')}` }, /longer than/],
    ]);
  });

  it('an appEvent trigger verifies the same way (its tolerance: 1m)', async () => {
    await expectRun(await post('stripe-app-event', { 'stripe-signature': header() }));
    await expectRefusals('stripe-app-event', [[{ 'stripe-signature': header(nowS() - 2 * 60) }, /older/]]);
  });
});

describe('github', () => {
  it('a request signed by @octokit/webhooks-methods runs', async () => {
    await expectRun(await post('github', { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, payload) }));
  });

  it('the exact bytes are signed: a pretty-printed body with non-ASCII text and a final newline', async () => {
    const raw = '{\n  "zen": "Keep it logically awesome — ✓",\n  "hook_id": 1\n}\n';
    await expectRun(await post('github', { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, raw) }, raw), {
      zen: 'Keep it logically awesome — ✓',
      hook_id: 1,
    });
  });

  it('bad and malformed signatures → 401, no execution', async () => {
    const sig = await githubSign(GITHUB_SECRET, payload);
    await expectRefusals('github', [
      [{}, /missing header x-hub-signature-256/],
      [{ 'x-hub-signature-256': await githubSign('another secret', payload) }, /does not match/],
      [{ 'x-hub-signature-256': await githubSign(GITHUB_SECRET, `${payload} `) }, /does not match/],
      [{ 'x-hub-signature-256': sig.replace('sha256=', 'sha1=') }, /does not start with sha256=/],
      [{ 'x-hub-signature-256': `sha256=${'z'.repeat(64)}` }, /does not match/],
      [{ 'x-hub-signature-256': `sha256=${'a'.repeat(8_000)}` }, /longer than/],
    ]);
  });

  it('verify as well as hmac: both must pass', async () => {
    const hmac = `sha256=${createHmac('sha256', HMAC_SECRET).update(payload).digest('hex')}`;
    const github = await githubSign(GITHUB_SECRET, payload);
    await expectRun(await post('github-and-hmac', { 'x-signature': hmac, 'x-hub-signature-256': github }));
    const before = await count('github-and-hmac');
    expect((await post('github-and-hmac', { 'x-hub-signature-256': github })).status).toBe(401);
    expect((await post('github-and-hmac', { 'x-signature': hmac })).status).toBe(401);
    expect(await count('github-and-hmac')).toBe(before);
  });
});

describe('slack', () => {
  const documentedBody =
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
  const documented = {
    'x-slack-request-timestamp': '1531420618',
    'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
  };
  const form = 'application/x-www-form-urlencoded';
  // Slack publishes no signing library; its documented example (above) pins the recipe this follows.
  const signed = (at = nowS(), body = documentedBody) => ({
    'x-slack-request-timestamp': String(at),
    'x-slack-signature': `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${at}:${body}`).digest('hex')}`,
  });

  it("Slack's documented request runs (integration with a tolerance reaching back to 2018)", async () => {
    const res = await post('slack-documented', documented, documentedBody, form);
    expect(res.status).toBe(200);
    const record = await s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
    expect(record.result).toMatchObject({ team_id: 'T1DC2JH3J', command: '/webhook-collect' });
  });

  it('the same documented request is a replay for the default 5m tolerance → 401', async () => {
    const before = await count('slack');
    const res = await post('slack', documented, documentedBody, form);
    expect(res.status).toBe(401);
    expect(await count('slack')).toBe(before);
  });

  it('a fresh request signed by the documented recipe runs; bad, expired, future and malformed → 401', async () => {
    const res = await post('slack', signed(), documentedBody, form);
    expect(res.status).toBe(200);
    await expectRefusals(
      'slack',
      [
        [{}, /missing header x-slack-request-timestamp/],
        [{ ...signed(), 'x-slack-request-timestamp': String(nowS() - 1) }, /does not match/],
        [signed(nowS() - 6 * 60), /older/],
        [signed(nowS() + 6 * 60), /future/],
        [{ ...signed(), 'x-slack-signature': signed()['x-slack-signature'].replace('v0=', 'v1=') }, /does not start with v0=/],
        [{ ...signed(), 'x-slack-request-timestamp': 'yesterday' }, /malformed timestamp/],
      ],
      documentedBody,
    );
  });
});

describe('a misconfigured secret', () => {
  it('is the operator’s problem: 500 naming no secret, no execution, the reason logged', async () => {
    const from = logLines.length;
    const res = await post('bad-secret', { 'webhook-id': 'x', 'webhook-timestamp': String(nowS()), 'webhook-signature': 'v1,x' });
    expect(res.status).toBe(500);
    expect(JSON.stringify(await res.json())).not.toContain('not*base64');
    expect(logLines.slice(from).some((l) => l.msg === 'webhook signing secret unusable')).toBe(true);
    expect(await count('bad-secret')).toBe(0);
  });
});
