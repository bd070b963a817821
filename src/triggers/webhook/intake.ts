/**
 * Webhook intake: the whole policy of `ANY /webhooks/{token}[/…]` (live) and
 * `ANY /webhooks/test/{token}[/…]` (test), over a plain request object and the runtime's narrow
 * `WebhookIntakeHost`, answering a plain response. No HTTP framework here: src/server/webhooks.ts
 * adapts Hono/Node to these shapes; tests and tools can call `handleWebhook` directly.
 *
 * Order matters for the promises of docs/promises.md: every rejection (404, 405, 413, 429, 401,
 * 400) happens before anything is recorded, and an accepted request is answered only after the
 * store committed its execution.
 */
import { randomUUID } from 'node:crypto';
import { newExecutionId } from '../../common/ids.js';
import { errorResponse, HttpError, httpErrorOf, StorageUnavailableError } from '../../common/errors.js';
import type { HttpResponseSpec } from '../../connectors/types.js';
import { concurrencyKeyOf } from '../../engine/concurrency-key.js';
import { correlationKeyOf } from '../../engine/correlation-key.js';
import type { CompiledIntegration, ValueTemplate, WebhookOptions } from '../../definition/types.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { idempotencyKeyOf, REPLAY_HEADER } from './idempotency.js';
import { bareScope } from '../../engine/connections.js';
import { evaluateTemplate } from '../../engine/evaluate.js';
import { verifyHmac } from './hmac.js';
import { verifySignature } from './verify/index.js';
import type { IntakeLimits } from './limits.js';
import { asyncWebhookResponse, executionJson, type RenderedResponse, runResponse, syncWebhookResponse } from './response.js';
import { buildWebhookTrigger, type WebhookUrls } from './trigger-data.js';

/**
 * One webhook request as the HTTP server received it, free of any server types. Intake checks it
 * and reads its body, then hands `buildWebhookTrigger` the narrower `WebhookTriggerRequest`
 * (./trigger-data.ts: token gone, path decoded, body read), which test cases build too.
 */
export interface IntakeRequest {
  /** HTTP method (any case). */
  method: string;
  /** The URL path after `/webhooks/`, still percent-encoded: `{token}[/…]` or `test/{token}[/…]`. */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** Header names lower-cased, repeated headers joined with ", ". Names are the caller's: no prototype keys are trusted. */
  headers: Record<string, string>;
  /**
   * The body: its bytes, or a reader called at most once, only after every check that needs no
   * body passed. A reader must stop at `limit` bytes and reject with `bodyTooLarge(limit)` (and
   * with an `HttpError` 400 when the body cannot be read), so a lying Content-Length cannot push
   * more than the limit into memory.
   */
  body: Buffer | ((limit: number) => Promise<Buffer>);
  /** The caller's address, for logs. */
  remoteAddress?: string;
}

/** The answer to write back, plus what the server labels its metrics and logs with. */
export interface IntakeResponse extends RenderedResponse {
  /** Route label: `/webhooks/:token` or `/webhooks/test/:token`. */
  route: string;
  /** The integration the token named, once known. */
  integration?: string;
}

/** An execution as intake records it (the store's NewExecution). */
export interface IntakeExecution {
  id: string;
  integration: string;
  trigger: unknown;
  test: boolean;
  attempt: number;
  queuedAt: string;
  /** The request's idempotency key, when the trigger declares one and it evaluated to one. */
  idempotencyKey?: string;
  correlationKey?: string;
  /** `concurrency:`'s key, when the file has one and it evaluated to one. */
  concurrencyKey?: string;
}

/** What a synchronous caller waits for: an early response (core.respond) or the finished run. */
export type SyncOutcome = { kind: 'response'; response: HttpResponseSpec } | { kind: 'done'; record: Parameters<typeof syncWebhookResponse>[0] };

/**
 * What intake needs from the runtime, and nothing more (src/runtime/webhook-intake.ts implements
 * it over the registry, tokens and dispatcher). Backpressure is an `HttpError` (429, or 503 while
 * shutting down, with Retry-After); an unusable store a `StorageUnavailableError`.
 */
export interface WebhookIntakeHost {
  /** The loaded webhook or appEvent integration a token belongs to, if any. */
  integrationForToken(token: string): Promise<CompiledIntegration | undefined>;
  webhookUrls(integration: string): WebhookUrls | undefined;
  /** Throws when one more execution of `integration` would be refused now (before the body is read). */
  checkCapacity(integration: string): void;
  /** Records the execution durably and queues it; throws like `checkCapacity` past the backlog. */
  submit(execution: IntakeExecution): Promise<void>;
  /**
   * Like `submit`, unless an earlier execution holds the idempotency key (same integration, same
   * live/test kind, within the window): then nothing is recorded and that execution's id comes back.
   */
  submitOnce(execution: IntakeExecution, claim: { key: string; windowMs: number }): Promise<{ executionId: string; duplicate: boolean }>;
  /** An execution as stored (or running in this process). */
  execution(id: string): Promise<ExecutionRecord | undefined>;
  /**
   * Waits up to `timeoutMs` for an execution (on any replica) to finish: its final record,
   * 'timeout', or 'missing' when the store has no such execution (retention removed it).
   */
  awaitFinished(id: string, timeoutMs: number): Promise<ExecutionRecord | 'timeout' | 'missing'>;
  /** Follows one execution to its outcome; called before `submit`, so no event is missed. */
  watch(executionId: string): {
    outcome: Promise<SyncOutcome>;
    cancel(): void;
    /**
     * The caller is answered before the run ends (it goes on in the background): from now on it
     * must survive a crash like any accepted execution (a synchronous run is not recorded before).
     */
    continueInBackground?(): Promise<void>;
  };
  isListening(integration: string): boolean;
  /** Saves a listening-mode capture of a test-URL request. */
  addCapture(capture: { id: string; integration: string; receivedAt: string; trigger: unknown }): Promise<void>;
  readonly env: NodeJS.ProcessEnv;
  readonly limits: IntakeLimits;
  readonly logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export const LIVE_ROUTE = '/webhooks/:token';
export const TEST_ROUTE = '/webhooks/test/:token';

/** The 413 of a body past the webhook's `maxBodyBytes` (declared or counted while reading). */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(413, `request body exceeds this webhook's limit of ${limit} bytes (maxBodyBytes)`, { connection: 'close' });
}

/**
 * Answers one webhook request. Rejections, backpressure and an unusable store come back as plain
 * responses (`{"error"}` with their status, through the one mapping in src/common/errors.ts);
 * anything unexpected is thrown for the server's error handler (500).
 */
export async function handleWebhook(req: IntakeRequest, host: WebhookIntakeHost): Promise<IntakeResponse> {
  const target = parseTarget(req.path);
  const route = target.test ? TEST_ROUTE : LIVE_ROUTE;
  const seen: { integration?: string } = {};
  try {
    return { ...(await intake(req, host, target, seen)), route, ...seen };
  } catch (err) {
    const http = httpErrorOf(err);
    if (!http) throw err;
    if (err instanceof StorageUnavailableError) {
      // A full, read-only or corrupt database is the operator's to fix; callers should retry later.
      host.logger?.error({ err: err.message, integration: seen.integration, remote: req.remoteAddress }, 'webhook refused: storage unavailable');
    }
    return { ...errorResponse(http), route, ...seen };
  }
}

interface Target {
  test: boolean;
  token: string;
  fragment: string;
}

function parseTarget(path: string): Target {
  let rest = path;
  let test = false;
  if (rest.startsWith('test/')) {
    test = true;
    rest = rest.slice(5);
  }
  const slash = rest.indexOf('/');
  const token = slash < 0 ? rest : rest.slice(0, slash);
  const fragment = slash < 0 ? '' : decodePath(rest.slice(slash + 1));
  return { test, token, fragment };
}

async function intake(
  req: IntakeRequest,
  host: WebhookIntakeHost,
  { test, token, fragment }: Target,
  seen: { integration?: string },
): Promise<RenderedResponse> {
  const integration = await host.integrationForToken(token);
  if (!integration) throw new HttpError(404, 'no webhook at this URL');
  // A disabled integration's live URL does not exist; its test URL still answers (docs/server.md "Webhook intake").
  if (!test && !integration.enabled) throw new HttpError(404, 'no webhook at this URL (the integration is disabled; its test URL still works)');
  seen.integration = integration.name;
  const options = integration.trigger as WebhookOptions & { type: string };

  const method = req.method.toUpperCase();
  if (!options.methods.includes(method)) {
    throw new HttpError(405, `method ${method} is not allowed for this webhook; use ${options.methods.join(', ')}`, {
      allow: options.methods.join(', '),
    });
  }
  if (Number(req.headers['content-length'] ?? 0) > options.maxBodyBytes) throw bodyTooLarge(options.maxBodyBytes);
  // Cheap backpressure before reading and parsing the body (the global backlog and this integration's share).
  host.checkCapacity(integration.name);

  const rawBody = await readBody(req.body, options.maxBodyBytes);
  if (options.hmac) {
    const check = verifyHmac(options.hmac, await signingSecret(host, integration, options.hmac.secret), rawBody, req.headers);
    if (!check.ok) throw new HttpError(401, `request signature rejected: ${check.reason}`);
  }
  if (options.verify) {
    const check = verifySignature(options.verify, await signingSecret(host, integration, options.verify.secret), rawBody, req.headers, Date.now());
    if ('unusableSecret' in check) {
      host.logger?.error({ integration: integration.name, err: check.unusableSecret }, 'webhook signing secret unusable');
      throw new HttpError(500, 'the webhook signing secret is not configured correctly on the runner');
    }
    if (!check.ok) {
      // The reason helps the operator; the caller learns nothing that would help forge a signature.
      host.logger?.warn(
        { integration: integration.name, scheme: options.verify.scheme, reason: check.reason, remote: req.remoteAddress },
        'webhook signature rejected',
      );
      throw new HttpError(401, 'request signature rejected');
    }
  }

  const executionId = newExecutionId();
  const receivedAt = new Date().toISOString();
  const trigger = buildWebhookTrigger(
    { method, pathFragment: fragment, query: req.query, headers: req.headers, rawBody },
    { webhookUrls: host.webhookUrls(integration.name)!, executionId, receivedAt },
    host.limits,
  );

  if (test && host.isListening(integration.name)) {
    await host.addCapture({ id: randomUUID(), integration: integration.name, receivedAt, trigger });
  }
  const execution: IntakeExecution = { id: executionId, integration: integration.name, trigger, test, attempt: 1, queuedAt: receivedAt };
  // After the signature checks: an unsigned request must not take a key a genuine one would need.
  const key = options.idempotency ? await idempotencyKeyOf(options.idempotency.key, integration, execution, host) : undefined;
  if (key !== undefined) execution.idempotencyKey = key;
  const claim = key !== undefined ? { key, windowMs: options.idempotency!.windowMs } : undefined;
  // Only files with a correlationKey pay for it; a bad key is logged, never a refused request.
  if (integration.correlationKey)
    execution.correlationKey = await correlationKeyOf(integration, trigger, { executionId, env: host.env, logger: host.logger });
  if (integration.concurrency)
    execution.concurrencyKey = await concurrencyKeyOf(integration, trigger, { executionId, env: host.env, logger: host.logger });
  const response = options.response;
  const answer =
    response.mode === 'sync'
      ? await syncRun(host, integration, execution, response.timeoutMs, claim)
      : await asyncRun(host, integration, execution, claim);
  noteDroppedHeaders(host, integration, answer);
  // No body with HEAD (the answer says what GET would have sent, without sending it).
  return method === 'HEAD' ? { ...answer, body: '' } : answer;
}

/**
 * The async answer is decided before the execution is recorded: a custom response that fails to
 * evaluate, or that cannot be sent (a header value such as `ż`, a name with a space), refuses the
 * request with 500 and records nothing — a sender retries a 500, and a recorded execution would
 * then run twice.
 */
async function asyncRun(
  host: WebhookIntakeHost,
  integration: CompiledIntegration,
  execution: IntakeExecution,
  claim: { key: string; windowMs: number } | undefined,
): Promise<RenderedResponse> {
  const { id, test, queuedAt: receivedAt } = execution;
  // The same answer `hcm-runner test` checks: the custom response, or 200 {"executionId"}.
  const answer = await asyncWebhookResponse(integration, execution.trigger, { id, test, receivedAt }, host.env);
  if (answer.error) {
    host.logger?.error({ integration: integration.name }, `${answer.error} (the request was refused; nothing was recorded)`);
    return errorResponse(new HttpError(500, `${answer.error}; the request was refused and nothing was recorded`));
  }
  if (!claim) {
    await host.submit(execution);
    return answer.response;
  }
  const held = await host.submitOnce(execution, claim);
  if (!held.duplicate) return answer.response;
  // A duplicate: the first request's answer again, computed from the first request as recorded.
  const first = await host.execution(held.executionId);
  const again = await asyncWebhookResponse(
    integration,
    first?.trigger ?? execution.trigger,
    { id: held.executionId, test, receivedAt: first?.queuedAt ?? receivedAt },
    host.env,
  );
  const replay = again.error ? executionJson(200, held.executionId, { executionId: held.executionId }) : again.response;
  return { ...replay, headers: { ...replay.headers, [REPLAY_HEADER]: 'true' } };
}

/** Framing headers an integration set are dropped on every answer; said once per integration version. */
const droppedLogged = new WeakSet<CompiledIntegration>();

function noteDroppedHeaders(host: WebhookIntakeHost, integration: CompiledIntegration, answer: RenderedResponse): void {
  if (!answer.dropped || droppedLogged.has(integration)) return;
  droppedLogged.add(integration);
  host.logger?.warn(
    { integration: integration.name, headers: answer.dropped },
    `integration ${integration.name}: response headers ${answer.dropped.join(', ')} were dropped; the runner sets the message framing itself (this is said once)`,
  );
}

async function readBody(body: IntakeRequest['body'], limit: number): Promise<Buffer> {
  if (typeof body === 'function') return body(limit);
  if (body.length > limit) throw bodyTooLarge(limit);
  return body;
}

async function syncRun(
  host: WebhookIntakeHost,
  integration: CompiledIntegration,
  execution: IntakeExecution,
  timeoutMs: number,
  claim: { key: string; windowMs: number } | undefined,
): Promise<RenderedResponse> {
  const id = execution.id;
  const watch = host.watch(id);
  try {
    if (!claim) await host.submit(execution);
    else {
      const held = await host.submitOnce(execution, claim);
      if (held.duplicate) {
        watch.cancel();
        return syncReplay(host, integration, held.executionId, timeoutMs);
      }
    }
  } catch (err) {
    watch.cancel();
    throw err;
  }
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([watch.outcome, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)))]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    await watch
      .continueInBackground?.()
      .catch((err: Error) => host.logger?.warn({ executionId: id, err: err.message }, 'could not record the synchronous run that timed out'));
    const error = `integration ${integration.name}: the synchronous run did not finish within ${timeoutMs} ms; it continues in the background`;
    return executionJson(504, id, { error, executionId: id });
  }
  const unsendable = (error: string) => host.logger?.error({ executionId: id, integration: integration.name }, error);
  if (outcome.kind === 'response') return runResponse(outcome.response, id, integration.name, unsendable);
  // The same rule `hcm-runner test` checks: what a step set, else 500 on failure, else 200 with the last results.
  return syncWebhookResponse(outcome.record, unsendable);
}

/**
 * A synchronous duplicate: the first execution's response once it finished — waiting for it, like
 * its own caller, up to `timeoutMs` (504 after that, as the first caller would have had).
 */
async function syncReplay(host: WebhookIntakeHost, integration: CompiledIntegration, firstId: string, timeoutMs: number): Promise<RenderedResponse> {
  const outcome = await host.awaitFinished(firstId, timeoutMs);
  let answer: RenderedResponse;
  if (outcome === 'timeout') {
    const error = `integration ${integration.name}: the synchronous run did not finish within ${timeoutMs} ms; it continues in the background`;
    answer = executionJson(504, firstId, { error, executionId: firstId });
  } else if (outcome === 'missing') {
    // Retention removed the first execution before its key's window ended: its response is gone.
    answer = executionJson(200, firstId, { executionId: firstId });
  } else {
    answer = syncWebhookResponse(outcome, (error) => host.logger?.error({ executionId: firstId, integration: integration.name }, error));
  }
  return { ...answer, headers: { ...answer.headers, [REPLAY_HEADER]: 'true' } };
}

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

/**
 * A signing secret (`hmac.secret`, `verify.secret`) of an integration version, read once: the
 * template belongs to one compiled version (a reload compiles a new one). An empty secret is
 * refused like a missing one: with an empty key anybody could sign requests.
 */
const signingSecrets = new WeakMap<ValueTemplate, string>();

async function signingSecret(host: WebhookIntakeHost, integration: CompiledIntegration, template: ValueTemplate): Promise<string> {
  let secret = signingSecrets.get(template);
  if (secret === undefined) {
    const value = await evaluateTemplate(template, bareScope(host.env)).catch((err: Error) => {
      host.logger?.error({ integration: integration.name, err: err.message }, 'webhook signing secret unavailable');
      return undefined;
    });
    if (typeof value !== 'string' || value === '') {
      throw new HttpError(500, 'the webhook signing secret is not configured on the runner (it is unset or empty)');
    }
    secret = value;
    signingSecrets.set(template, secret);
  }
  return secret;
}
