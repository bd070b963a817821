/**
 * `verify:` schemes on plain requests, signed by the senders' own libraries (standardwebhooks,
 * stripe, @octokit/webhooks-methods) or their documented examples (Slack, GitHub), so a scheme
 * that only agrees with itself fails here. The same schemes over HTTP: test/server/verify.test.ts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import type { VerifyOptions } from '../../src/definition/types.js';
import { signatureSchemes, verifySignature } from '../../src/triggers/webhook/verify/index.js';
import { MAX_HEADER_CHARS, MAX_SIGNATURES } from '../../src/triggers/webhook/verify/shared.js';
import { verifyOptions } from '../../src/triggers/webhook/spec.js';

const stripe = new Stripe('sk_test_unused');
const NOW = Date.parse('2026-03-02T10:00:00Z');
const nowS = Math.floor(NOW / 1000);
const FIVE_MIN = 300_000;
const body = Buffer.from('{"type":"worker.transferred","data":{"workerId":21001}}');

type Scheme = VerifyOptions['scheme'];
const check = (scheme: Scheme, secret: string, headers: Record<string, string>, raw: Buffer | string = body, nowMs = NOW, toleranceMs = FIVE_MIN) =>
  verifySignature({ scheme, toleranceMs }, secret, Buffer.from(raw), headers, nowMs);
const ok = (r: ReturnType<typeof check>) => expect(r).toEqual({ ok: true });
const refused = (r: ReturnType<typeof check>, reason: RegExp) => {
  expect(r.ok).toBe(false);
  expect((r as { reason: string }).reason).toMatch(reason);
};

describe('scheme names', () => {
  it('the spec enum, the compiled type and the registry name the same schemes', () => {
    expect(Object.keys(signatureSchemes).sort()).toEqual([...(verifyOptions.scheme!.schema.enum as string[])].sort());
  });
});

describe('standard-webhooks (signed with the standardwebhooks library)', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const wh = new Webhook(secret);
  const signed = (at = nowS, id = 'msg_2Lh9KRb0pzN4LePd', raw: Buffer = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': wh.sign(id, new Date(at * 1000), raw),
  });

  it('accepts its signature over the raw bytes, and the library accepts what we accept', () => {
    const headers = signed();
    ok(check('standard-webhooks', secret, headers));
    // The reference verifier agrees on the same request (it checks the time against the real clock).
    const live = signed(Math.floor(Date.now() / 1000));
    expect(() => wh.verify(body.toString(), live)).not.toThrow();
    ok(check('standard-webhooks', secret, live, body, Date.now()));
  });

  it('any of several space-separated signatures may match; other versions are ignored', () => {
    const headers = signed();
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(headers['webhook-id'], new Date(NOW), body);
    ok(check('standard-webhooks', secret, { ...headers, 'webhook-signature': `${other} v1a,c2lnbmF0dXJl ${headers['webhook-signature']}` }));
    refused(check('standard-webhooks', secret, { ...headers, 'webhook-signature': other }), /no v1 signature matches/);
  });

  it('the id, the timestamp and every body byte are signed', () => {
    const headers = signed();
    refused(check('standard-webhooks', secret, { ...headers, 'webhook-id': 'msg_other' }), /matches/);
    refused(check('standard-webhooks', secret, { ...headers, 'webhook-timestamp': String(nowS + 1) }), /matches/);
    refused(check('standard-webhooks', secret, headers, Buffer.concat([body, Buffer.from(' ')])), /matches/);
  });

  it('refuses timestamps outside the tolerance, either way', () => {
    ok(check('standard-webhooks', secret, signed(nowS - 299)));
    refused(check('standard-webhooks', secret, signed(nowS - 301)), /older/);
    refused(check('standard-webhooks', secret, signed(nowS + 301)), /future/);
    ok(check('standard-webhooks', secret, signed(nowS - 3000), body, NOW, 3_600_000));
  });

  it('a secret that is not whsec_<base64> is reported as unusable, not as a bad request', () => {
    expect(check('standard-webhooks', 'whsec_not*base64', signed())).toMatchObject({ ok: false, unusableSecret: /whsec_/ });
    expect(check('standard-webhooks', 'whsec_', signed())).toMatchObject({ ok: false, unusableSecret: expect.any(String) });
  });
});

describe('stripe (signed with stripe.webhooks.generateTestHeaderString)', () => {
  const secret = 'whsec_test_7d0c8b0b5a1f4e2c9a3d';
  const header = (timestamp = nowS, s = secret, payload = body.toString()) =>
    stripe.webhooks.generateTestHeaderString({ payload, secret: s, timestamp });

  it("accepts Stripe's header, and Stripe's own verifier accepts what we accept", () => {
    ok(check('stripe', secret, { 'stripe-signature': header() }));
    const live = header(Math.floor(Date.now() / 1000));
    expect(() => stripe.webhooks.constructEvent(body.toString(), live, secret)).not.toThrow();
    ok(check('stripe', secret, { 'stripe-signature': live }, body, Date.now()));
  });

  it('several v1 signatures (a rolled secret): any may match; v0 is ignored', () => {
    const old = header(nowS, 'whsec_old_secret').split(',')[1]!;
    const cur = header().split(',')[1]!;
    ok(check('stripe', secret, { 'stripe-signature': `t=${nowS},${old},${cur},v0=abc` }));
    refused(check('stripe', secret, { 'stripe-signature': `t=${nowS},${old}` }), /no v1 signature matches/);
    refused(check('stripe', secret, { 'stripe-signature': `t=${nowS},v0=${cur.slice(3)}` }), /no v1 signature/);
  });

  it('the timestamp is signed and must be within the tolerance', () => {
    const sig = header().split(',')[1]!;
    refused(check('stripe', secret, { 'stripe-signature': `t=${nowS - 1},${sig}` }), /matches/);
    refused(check('stripe', secret, { 'stripe-signature': header(nowS - 301) }), /older/);
    refused(check('stripe', secret, { 'stripe-signature': header(nowS + 301) }), /future/);
    refused(check('stripe', secret, { 'stripe-signature': sig }), /no t/);
    refused(check('stripe', secret, { 'stripe-signature': `t=${nowS},t=${nowS},${sig}` }), /more than one t/);
  });
});

describe('github (signed with @octokit/webhooks-methods, and the documented example)', () => {
  const secret = 'a-github-webhook-secret';

  it("accepts octokit's signature of the payload", async () => {
    ok(check('github', secret, { 'x-hub-signature-256': await githubSign(secret, body.toString()) }));
    refused(check('github', 'another secret', { 'x-hub-signature-256': await githubSign(secret, body.toString()) }), /does not match/);
  });

  it('accepts the example of GitHub\'s docs ("Validating webhook deliveries")', () => {
    const documented = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    ok(check('github', "It's a Secret to Everybody", { 'x-hub-signature-256': documented }, 'Hello, World!'));
  });

  it('refuses sha1 signatures and other prefixes', async () => {
    const sig = await githubSign(secret, body.toString());
    refused(check('github', secret, { 'x-hub-signature-256': sig.replace('sha256=', 'sha1=') }), /does not start with sha256=/);
    refused(check('github', secret, { 'x-hub-signature': sig }), /missing header x-hub-signature-256/);
  });
});

describe('slack (the example of "Verifying requests from Slack")', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const timestamp = 1531420618;
  const documentedBody =
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
  const headers = {
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
  };

  it('accepts the documented request at the time it was sent', () => {
    ok(check('slack', secret, headers, documentedBody, timestamp * 1000 + 10_000));
  });

  it('refuses it later (a replay), earlier (future-dated), or with a changed byte', () => {
    refused(check('slack', secret, headers, documentedBody, (timestamp + 301) * 1000), /older/);
    refused(check('slack', secret, headers, documentedBody, (timestamp - 301) * 1000), /future/);
    refused(check('slack', secret, headers, `${documentedBody}&x=1`, timestamp * 1000), /does not match/);
    refused(
      check(
        'slack',
        secret,
        { ...headers, 'x-slack-signature': headers['x-slack-signature'].replace('v0=', 'v1=') },
        documentedBody,
        timestamp * 1000,
      ),
      /v0=/,
    );
  });
});

describe('hostile headers: refused, and bounded', () => {
  const swSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const wh = new Webhook(swSecret);
  const id = 'msg_1';
  const good = wh.sign(id, new Date(nowS * 1000), body);
  const sw = (signature: string, extra: Record<string, string> = {}) =>
    check('standard-webhooks', swSecret, { 'webhook-id': id, 'webhook-timestamp': String(nowS), 'webhook-signature': signature, ...extra });
  const decoy = `v1,${Buffer.alloc(32, 7).toString('base64')}`;

  it('malformed entries: wrong prefix, non-base64, wrong length, no comma', () => {
    refused(sw(good.replace('v1,', 'v2,')), /no v1 signature/);
    refused(sw('v1,!!!not-base64!!!'), /matches/);
    refused(sw(`v1,${good.slice(3, -4)}`), /matches/);
    refused(sw('garbage'), /without ","/);
    refused(sw(good, { 'webhook-timestamp': '17e8' }), /malformed timestamp/);
    refused(sw(good, { 'webhook-timestamp': '' }), /missing header webhook-timestamp/);
    refused(check('stripe', 'whsec_x', { 'stripe-signature': 'nonsense' }), /without "="/);
    refused(check('slack', 'x', { 'x-slack-request-timestamp': String(nowS), 'x-slack-signature': 'v0=zz' }), /does not match/);
  });

  it(`examines at most ${MAX_SIGNATURES} signatures: the ${MAX_SIGNATURES}th may match, a ${MAX_SIGNATURES + 1}th entry is refused`, () => {
    ok(sw([...Array(MAX_SIGNATURES - 1).fill(decoy), good].join(' ')));
    refused(sw([...Array(MAX_SIGNATURES).fill(decoy), good].join(' ')), /more than 32 signatures/);
    const sig = stripe.webhooks.generateTestHeaderString({ payload: body.toString(), secret: 'whsec_s', timestamp: nowS }).split(',')[1]!;
    const stripeDecoy = `v1=${'0'.repeat(64)}`;
    ok(check('stripe', 'whsec_s', { 'stripe-signature': [`t=${nowS}`, ...Array(MAX_SIGNATURES - 1).fill(stripeDecoy), sig].join(',') }));
    refused(
      check('stripe', 'whsec_s', { 'stripe-signature': [`t=${nowS}`, ...Array(MAX_SIGNATURES).fill(stripeDecoy), sig].join(',') }),
      /more than 32 v1/,
    );
  });

  it('10,000 signatures and a megabyte header are refused before any is decoded', () => {
    refused(sw(Array(10_000).fill(decoy).join(' ')), /longer than/);
    refused(sw(Array(10_000).fill('v1,a').join(' ').slice(0, MAX_HEADER_CHARS)), /more than 32 signatures/);
    refused(check('stripe', 'whsec_s', { 'stripe-signature': `t=${nowS},${Array(10_000).fill('v1=ab').join(',')}` }), /longer than/);
    refused(check('github', 's', { 'x-hub-signature-256': `sha256=${'a'.repeat(1 << 20)}` }), /longer than/);
    refused(sw(good, { 'webhook-id': 'x'.repeat(MAX_HEADER_CHARS + 1) }), /longer than/);
  });

  it('arbitrary header values never throw and never pass (property)', () => {
    const names = [
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'stripe-signature',
      'x-hub-signature-256',
      'x-slack-signature',
      'x-slack-request-timestamp',
    ];
    // Values built from the pieces real headers are made of, so the parsers get past their first checks.
    const piece = fc.oneof(
      fc.constantFrom('v1,', 'v1=', 'v0=', 't=', 'sha256=', ',', ' ', '=', String(nowS), good.slice(3), '0'.repeat(64)),
      fc.string({ maxLength: 20 }),
    );
    const value = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(signatureSchemes) as Scheme[])),
        fc.dictionary(fc.constantFrom(...names), value),
        (scheme, headers) => {
          const r = check(scheme, swSecret, headers);
          expect(r.ok).toBe(false);
          expect(typeof (r as { reason: string }).reason).toBe('string');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a header named like an Object.prototype key is just missing', () => {
    const headers = Object.create(null) as Record<string, string>;
    refused(check('github', 's', headers), /missing header/);
    refused(check('github', 's', { constructor: 'x' } as Record<string, string>), /missing header/);
  });
});

describe('compile', () => {
  const load = (verify: string) =>
    loadText('x.yaml', `name: t\ntrigger:\n  type: webhook\n  verify: ${verify}\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n`);

  it("tolerance defaults to the spec's 5m; a secret may be {env: NAME}", () => {
    const r = load('{ scheme: stripe, secret: { env: STRIPE_SECRET } }');
    expect(r.problems).toEqual([]);
    const v = (r.integration!.trigger as { verify: VerifyOptions }).verify;
    expect(verifyOptions.tolerance!.default).toBe('5m');
    expect(v).toMatchObject({ scheme: 'stripe', toleranceMs: FIVE_MIN, secret: { kind: 'env', name: 'STRIPE_SECRET' } });
    expect((load('{ scheme: slack, secret: s, tolerance: 30s }').integration!.trigger as { verify: VerifyOptions }).verify.toleranceMs).toBe(30_000);
  });

  it('an unknown scheme, a missing secret and a zero or malformed tolerance are problems at their line', () => {
    for (const [verify, message] of [
      ['{ scheme: svix, secret: s }', /scheme/],
      ['{ scheme: github }', /secret/],
      ['{ scheme: slack, secret: s, tolerance: 0s }', /"0s" is not a tolerance/],
      ['{ scheme: slack, secret: s, tolerance: 5 minutes }', /tolerance/],
      ['{ scheme: slack, secret: s, header: x }', /header/],
    ] as const) {
      const r = load(verify);
      expect(r.integration, verify).toBeUndefined();
      expect(r.problems[0]!.message, verify).toMatch(message);
      expect(r.problems[0]!.line, verify).toBe(4);
    }
  });

  it('appEvent triggers take verify too', () => {
    const r = loadText(
      'x.yaml',
      'name: t\ntrigger: { type: appEvent, verify: { scheme: github, secret: s } }\nsteps: [{ id: a, action: core.log, inputs: { message: x } }]\n',
    );
    expect(r.problems).toEqual([]);
    expect((r.integration!.trigger as { verify: VerifyOptions }).verify.scheme).toBe('github');
  });
});

describe('docs/triggers.md "Signature schemes"', () => {
  it('every YAML example validates (trigger fragments with a name and a step added)', () => {
    const text = readFileSync(new URL('../../docs/triggers.md', import.meta.url), 'utf8');
    const section = text.slice(text.indexOf('## Signature schemes'), text.indexOf('## Hot reload'));
    const examples = [...section.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const yaml of examples) {
      const file = yaml.includes('\nsteps:') ? yaml : `name: doc-example\n${yaml}steps: [{ id: a, action: core.log, inputs: { message: x } }]\n`;
      expect(loadText('doc.yaml', file).problems, yaml).toEqual([]);
    }
  });
});

// A sanity check of the Slack recipe the docs give, with Node's own HMAC (not our code).
it('the documented Slack signature is HMAC-SHA256 of v0:timestamp:body', () => {
  const mac = createHmac('sha256', '8f742231b10e8888abcd99yyyzzz85a5').update('v0:1531420618:token=x').digest('hex');
  ok(
    check(
      'slack',
      '8f742231b10e8888abcd99yyyzzz85a5',
      { 'x-slack-request-timestamp': '1531420618', 'x-slack-signature': `v0=${mac}` },
      'token=x',
      1531420618_000,
    ),
  );
});
