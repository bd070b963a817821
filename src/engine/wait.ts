/**
 * core.wait and core.callback (docs/authoring.md "Waiting"). They run in the engine, not in the
 * core connector: a wait ends the run (WaitSignal) and a resumed run re-checks it from its step
 * record, which no connector sees. The host side — tokens, the cap on waiting executions, how a
 * wait is carried out — is the DurableHost (engine/durable.ts).
 */
import { ActionError } from '../common/errors.js';
import { parseDuration } from '../common/duration.js';
import type { CompiledStep } from '../definition/types.js';
import { type CallbackRequest, type DurableHost, WaitSignal } from './durable.js';
import type { StepRecord } from './record.js';

/** The longest a wait, a callback timeout or a callback URL's life may be. */
const MAX_WAIT_MS = 365 * 86_400_000;

export interface WaitContext {
  durable: DurableHost | undefined;
  integration: string;
  executionId: string;
  test: boolean;
  step: CompiledStep;
  /** The step's record in this run; a wait that suspends writes `wakeAt`/`callback` on it. */
  rec: StepRecord;
  /** The same step's `waiting` record in the run this one resumes: the wait is re-checked, not started anew. */
  resumed: StepRecord | undefined;
  now?: Date;
}

function hostOf(ctx: WaitContext): DurableHost {
  if (!ctx.durable)
    throw new ActionError(`${ctx.step.action.key} cannot run here: this host cannot wait (it keeps no executions to resume later)`, {
      code: 'not_supported',
    });
  return ctx.durable;
}

function duration(name: string, text: unknown): number {
  const ms = typeof text === 'string' ? parseDuration(text) : undefined;
  if (ms === undefined)
    throw new ActionError(`input "${name}" must be a duration like 90s, 10m, 2h or 3d, not ${JSON.stringify(text)}`, { code: 'invalid_input' });
  if (ms > MAX_WAIT_MS) throw new ActionError(`input "${name}" is ${text}; at most 365d is allowed`, { code: 'invalid_input' });
  return ms;
}

/** core.callback: a URL made by the host for this step; results `{url, expiresAt}`. */
export async function createCallback(ctx: WaitContext, inputs: Record<string, unknown>): Promise<{ url: string; expiresAt: string }> {
  const host = hostOf(ctx);
  const now = ctx.now ?? new Date();
  const expiresAt = new Date(now.getTime() + duration('expiresIn', inputs.expiresIn ?? '7d')).toISOString();
  const { url } = await host.createCallback({
    executionId: ctx.executionId,
    integration: ctx.integration,
    step: ctx.step.id,
    expiresAt,
    test: ctx.test,
  });
  return { url, expiresAt };
}

/** What a core.wait step's inputs ask for, checked: a time to wake at, or a callback (with its timeout). */
type WaitPlan = { kind: 'time'; wakeAt: Date; for?: string; until?: string } | { kind: 'callback'; url: string; token: string; timeoutAt?: Date };

function plan(ctx: WaitContext, host: DurableHost, inputs: Record<string, unknown>, now: Date): WaitPlan {
  const given = (['for', 'until', 'callback'] as const).filter((k) => inputs[k] !== undefined);
  if (given.length !== 1)
    throw new ActionError(
      given.length === 0
        ? 'give one of the inputs for, until or callback'
        : `give only one of the inputs for, until or callback, not ${given.join(' and ')}`,
      { code: 'invalid_input' },
    );
  if (inputs.timeout !== undefined && given[0] !== 'callback')
    throw new ActionError('input "timeout" goes with "callback" only (a time wait ends by itself)', { code: 'invalid_input' });
  // A resumed wait keeps the time it was given when it started (its `for` counts from then).
  const kept = ctx.resumed?.wakeAt ? new Date(ctx.resumed.wakeAt) : undefined;
  if (inputs.for !== undefined) {
    const ms = duration('for', inputs.for);
    return { kind: 'time', wakeAt: kept ?? new Date(now.getTime() + ms), for: String(inputs.for) };
  }
  if (inputs.until !== undefined) {
    const at = new Date(typeof inputs.until === 'number' ? inputs.until : String(inputs.until)); // a date input: ISO-8601 or epoch ms
    if (Number.isNaN(at.getTime()))
      throw new ActionError(`input "until" must be an ISO-8601 time, not ${JSON.stringify(inputs.until)}`, { code: 'invalid_input' });
    if (at.getTime() - now.getTime() > MAX_WAIT_MS)
      throw new ActionError(`input "until" is more than 365 days away (${at.toISOString()})`, { code: 'invalid_input' });
    return { kind: 'time', wakeAt: kept ?? at, until: at.toISOString() };
  }
  const url = String(inputs.callback);
  const token = host.tokenOf(url);
  if (token === undefined)
    throw new ActionError(`callback ${url} was not made by this host: give the url of a core.callback step of this execution`, {
      code: 'invalid_input',
    });
  let timeoutAt: Date | undefined;
  if (inputs.timeout !== undefined) timeoutAt = kept ?? new Date(now.getTime() + duration('timeout', inputs.timeout));
  return { kind: 'callback', url, token, timeoutAt };
}

/**
 * core.wait: results at once when its time has come or its callback's request is there; else
 * (host mode `suspend`) throws WaitSignal after marking the step record, and the run ends
 * `waiting`. Host mode `now` finishes every wait at once and tells the host.
 */
export async function runWait(ctx: WaitContext, inputs: Record<string, unknown>): Promise<{ wokeAt: string } | CallbackRequest> {
  const host = hostOf(ctx);
  const now = ctx.now ?? new Date();
  const p = plan(ctx, host, inputs, now);
  const step = ctx.step.id;
  if (p.kind === 'time') {
    if (p.wakeAt.getTime() <= now.getTime()) {
      // A woken wait keeps when it was due beside when it woke (the console shows both; the lag is their difference).
      if (ctx.resumed?.wakeAt) ctx.rec.wakeAt = ctx.resumed.wakeAt;
      return { wokeAt: now.toISOString() };
    }
    const wakeAt = p.wakeAt.toISOString();
    if (host.mode === 'now') {
      host.waited?.({ step, kind: 'time', wakeAt, ...(p.for ? { for: p.for } : {}), ...(p.until ? { until: p.until } : {}) });
      return { wokeAt: wakeAt };
    }
    await suspend(ctx, host);
    ctx.rec.wakeAt = wakeAt;
    throw new WaitSignal({ step, kind: 'time' }, wakeAt);
  }
  const found = await host.lookupCallback(p.token, ctx.executionId, step);
  const timeoutAt = p.timeoutAt?.toISOString();
  if (host.mode === 'now') host.waited?.({ step, kind: 'callback', callbackUrl: p.url, ...(timeoutAt ? { timeoutAt } : {}) });
  if (found.state === 'received') return found.request;
  if (found.state === 'unknown')
    throw new ActionError(`callback ${p.url} is unknown or has expired (a callback URL belongs to the execution that made it)`, {
      code: 'callback_unknown',
    });
  if (p.timeoutAt && p.timeoutAt.getTime() <= now.getTime())
    throw new ActionError(`no request reached callback ${p.url} before the timeout (${inputs.timeout}, at ${timeoutAt})`, { code: 'timeout' });
  if (host.mode === 'now')
    throw new ActionError(`no request reached callback ${p.url}, and this host cannot wait for one`, { code: 'not_supported' });
  await suspend(ctx, host);
  ctx.rec.callback = p.token;
  if (timeoutAt) ctx.rec.wakeAt = timeoutAt;
  throw new WaitSignal({ step, kind: 'callback', callbackUrl: p.url, ...(timeoutAt ? { timeoutAt } : {}) }, timeoutAt);
}

/** A wait that starts counts against the integration's cap; one that waits again after a wake-up was already counted. */
async function suspend(ctx: WaitContext, host: DurableHost): Promise<void> {
  if (ctx.resumed) return;
  try {
    await host.admitWait(ctx.integration, ctx.executionId);
  } catch (err) {
    if (err instanceof ActionError) throw err;
    throw new ActionError((err as Error).message, { code: 'waiting_limit' });
  }
}
