/**
 * The webhook trigger's spec: its keys (methods, body limit, HMAC, verify, idempotency, response), their defaults and
 * the compile step. appEvent triggers take the same keys (`webhookOptions`, `compileWebhookOptions`).
 * Spec-only: imports nothing that runs (see definition/spec.ts).
 */
import { parseDuration } from '../../common/duration.js';
import type { Options, TriggerCompileContext, TriggerSpec } from '../../definition/spec.js';
import { defaultOf, enumValue, numberValue, objectSchema, stringValue } from '../../definition/spec.js';
import type { CompiledTrigger, IdempotencyOptions, ValueTemplate, VerifyOptions, WebhookOptions, WebhookResponse } from '../../definition/types.js';
import { headerMapProblems, headerValueProblem } from '../../common/http-header-syntax.js';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export const hmacOptions: Options = {
  secret: { schema: { $ref: '#/$defs/stringValue' } },
  header: { schema: { type: 'string' }, default: 'x-hmac-hash' },
  algorithm: { schema: { enum: ['sha1', 'sha256', 'sha384', 'sha512'] }, default: 'sha256' },
  encoding: { schema: { enum: ['hex', 'base64'] }, default: 'hex' },
  prefix: { schema: { type: 'string' }, default: '' },
};

export const verifyOptions: Options = {
  scheme: {
    schema: { enum: ['standard-webhooks', 'stripe', 'github', 'slack'] },
    description:
      "The sender's scheme: standard-webhooks (webhook-signature), stripe (Stripe-Signature), github (X-Hub-Signature-256), slack (X-Slack-Signature).",
  },
  secret: { schema: { $ref: '#/$defs/stringValue' }, description: 'The signing secret as the sender shows it (standard-webhooks: whsec_<base64>).' },
  tolerance: {
    schema: { $ref: '#/$defs/duration' },
    default: '5m',
    description: 'standard-webhooks, stripe, slack: a request signed longer ago, or further ahead, than this answers 401.',
  },
};

export const responseOptions: Options = {
  mode: { schema: { enum: ['async', 'sync'] }, default: 'async' },
  statusCode: {
    schema: {
      'x-expect': 'an HTTP status code (200-599) or an expression {% … %}',
      anyOf: [{ type: 'integer', minimum: 200, maximum: 599 }, { $ref: '#/$defs/expression' }],
    },
  },
  contentType: { schema: { type: 'string' } },
  headers: {
    schema: {
      'x-expect': 'a map of header names to values, or an expression {% … %}',
      anyOf: [{ type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } }, { $ref: '#/$defs/expression' }],
    },
  },
  body: { schema: {}, description: 'Literal body or an expression.' },
  timeoutMs: { schema: { type: 'integer', minimum: 1, maximum: 600_000 }, default: 30_000, description: 'sync only: answer 504 after this long.' },
};

export const webhookOptions: Options = {
  methods: {
    schema: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] } },
    default: ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'],
    description: 'Allowed HTTP methods.',
  },
  maxBodyBytes: {
    schema: { type: 'integer', minimum: 1, maximum: 104_857_600 },
    default: 6 * 1024 * 1024,
    description: 'Largest request body accepted (413 above).',
  },
  hmac: { schema: objectSchema(hmacOptions, ['secret']), description: 'Verify an HMAC signature of the raw body; a mismatch answers 401.' },
  verify: {
    schema: objectSchema(verifyOptions, ['scheme', 'secret']),
    description: "Verify the sender's own signature scheme over the raw body (instead of, or as well as, hmac); any failure answers 401.",
  },
  idempotencyKey: {
    schema: { $ref: '#/$defs/expression' },
    description:
      "The request's delivery id, e.g. {% $trigger.headers.'webhook-id' %}: a later request with the same key within dedupeWindow creates no execution and is answered as the first (x-idempotent-replay: true). Nothing or \"\" → no deduplication.",
  },
  dedupeWindow: {
    schema: { $ref: '#/$defs/duration' },
    default: '24h',
    description: 'How long an idempotencyKey is remembered (1m to 30d).',
  },
  response: {
    schema: {
      'x-expect': 'a response object {mode, statusCode, contentType, headers, body} or one expression {% … %}',
      anyOf: [{ $ref: '#/$defs/expression' }, objectSchema(responseOptions)],
    },
    description: "What the caller gets back: async (202 or a custom answer) or sync (the run's core.respond).",
  },
};

type Webhook = Extract<CompiledTrigger, { type: 'webhook' }>;

export const webhookSpec: TriggerSpec<Webhook> = {
  type: 'webhook',
  description: 'Runs when an HTTP request arrives at /webhooks/<name>.',
  docs: 'docs/authoring.md#webhook',
  options: webhookOptions,
  compile: (raw, ctx) => ({ type: 'webhook', ...compileWebhookOptions(raw, ctx) }),
};

export function compileWebhookOptions(raw: Record<string, unknown>, ctx: TriggerCompileContext): WebhookOptions {
  const hmac = isObj(raw.hmac) ? raw.hmac : undefined;
  return {
    methods: Array.isArray(raw.methods) ? raw.methods.map(String) : defaultOf<string[]>(webhookOptions, 'methods'),
    maxBodyBytes: numberValue(raw, webhookOptions, 'maxBodyBytes'),
    hmac: hmac
      ? {
          secret: ctx.template(hmac.secret, '/trigger/hmac/secret'),
          header: stringValue(hmac, hmacOptions, 'header').toLowerCase(),
          algorithm: enumValue(hmac, hmacOptions, 'algorithm'),
          encoding: enumValue(hmac, hmacOptions, 'encoding'),
          prefix: stringValue(hmac, hmacOptions, 'prefix'),
        }
      : undefined,
    verify: isObj(raw.verify) ? compileVerify(raw.verify, ctx) : undefined,
    response: compileResponse(raw.response, ctx),
    idempotency: compileIdempotency(raw, ctx),
  };
}

/** The bounds of `dedupeWindow`: long enough for a sender's retries, short enough to keep the key table small. */
export const DEDUPE_WINDOW_MIN_MS = 60_000;
export const DEDUPE_WINDOW_MAX_MS = 30 * 86_400_000;

function compileIdempotency(raw: Record<string, unknown>, ctx: TriggerCompileContext): IdempotencyOptions | undefined {
  if (raw.idempotencyKey === undefined) {
    if (raw.dedupeWindow !== undefined)
      ctx.problem('/trigger/dedupeWindow', 'dedupeWindow applies only with an idempotencyKey; add one or remove it', 'key');
    return undefined;
  }
  const window = stringValue(raw, webhookOptions, 'dedupeWindow');
  const windowMs = parseDuration(window);
  // A malformed duration was reported by the schema; the range is checked here.
  if (windowMs !== undefined && (windowMs < DEDUPE_WINDOW_MIN_MS || windowMs > DEDUPE_WINDOW_MAX_MS)) {
    ctx.problem('/trigger/dedupeWindow', `dedupeWindow "${window}" is out of range; write a duration from 1m to 30d (e.g. 24h)`);
  }
  return {
    key: ctx.template(raw.idempotencyKey, '/trigger/idempotencyKey'),
    windowMs: windowMs ?? parseDuration(defaultOf<string>(webhookOptions, 'dedupeWindow'))!,
  };
}

function compileVerify(raw: Record<string, unknown>, ctx: TriggerCompileContext): VerifyOptions | undefined {
  // An unknown or missing scheme was reported by the schema (the enum lists the schemes).
  if (!(verifyOptions.scheme!.schema.enum as unknown[]).includes(raw.scheme)) return undefined;
  const tolerance = stringValue(raw, verifyOptions, 'tolerance');
  const toleranceMs = parseDuration(tolerance);
  // A malformed duration was reported by the schema; here only "0s" and the like remain.
  if (toleranceMs === undefined) ctx.problem('/trigger/verify/tolerance', `"${tolerance}" is not a tolerance; write e.g. 30s or 5m (more than 0)`);
  return {
    scheme: raw.scheme as VerifyOptions['scheme'],
    secret: ctx.template(raw.secret, '/trigger/verify/secret'),
    toleranceMs: toleranceMs ?? parseDuration(defaultOf<string>(verifyOptions, 'tolerance'))!,
  };
}

const ASYNC_ONLY = ['statusCode', 'contentType', 'headers', 'body'] as const;

function compileResponse(raw: unknown, ctx: TriggerCompileContext): WebhookResponse {
  if (typeof raw === 'string') return { mode: 'async', computed: ctx.template(raw, '/trigger/response') };
  if (!isObj(raw)) return { mode: 'async' };
  if (enumValue(raw, responseOptions, 'mode') === 'sync') {
    for (const k of ASYNC_ONLY) {
      if (raw[k] !== undefined)
        ctx.problem(`/trigger/response/${k}`, `response.${k} applies to async mode only; in sync mode a core.respond step sets the response`, 'key');
    }
    return { mode: 'sync', timeoutMs: numberValue(raw, responseOptions, 'timeoutMs') };
  }
  if (raw.timeoutMs !== undefined) ctx.problem('/trigger/response/timeoutMs', 'response.timeoutMs applies to sync mode only', 'key');
  const field = (k: string) => (raw[k] !== undefined ? ctx.template(raw[k], `/trigger/response/${k}`) : undefined);
  const custom = { statusCode: field('statusCode'), contentType: field('contentType'), headers: field('headers'), body: field('body') };
  checkHeaderSyntax(custom.headers, custom.contentType, ctx);
  const any = Object.values(custom).some((v) => v !== undefined);
  return any ? { mode: 'async', custom } : { mode: 'async' };
}

/**
 * Literal header names and values of a custom response that no HTTP message can carry are
 * refused here, at their line and column; computed ones are checked per request, before the
 * execution is recorded (src/triggers/webhook/response-security.ts).
 */
function checkHeaderSyntax(headers: ValueTemplate | undefined, contentType: ValueTemplate | undefined, ctx: TriggerCompileContext): void {
  const known = (t: ValueTemplate) => (t.kind === 'literal' ? t.value : undefined);
  let map: Record<string, unknown> | undefined;
  if (headers?.kind === 'literal' && isObj(headers.value)) map = headers.value;
  if (headers?.kind === 'object') map = Object.fromEntries(headers.entries.map(([k, t]) => [k, known(t)]));
  for (const p of headerMapProblems(map ?? {})) {
    ctx.problem(`/trigger/response/headers/${escapePointer(p.name)}`, p.problem, p.part === 'name' ? 'key' : 'value');
  }
  const type = contentType && known(contentType);
  const typeProblem = typeof type === 'string' ? headerValueProblem(type) : undefined;
  if (typeProblem) ctx.problem('/trigger/response/contentType', `response.contentType ${JSON.stringify(type)} ${typeProblem}`);
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
