/**
 * What the admin API (`/api`, src/server/admin.ts) and the console (`/console`, src/console/)
 * can do, once: both call these functions, so every rule (which integration can run, how a
 * replay or a saved payload gets its trigger data, backpressure answers) lives here only.
 * Failures are `HttpError`s (src/common/errors.ts) with the HTTP status both surfaces answer with.
 */
import { newExecutionId } from '../common/ids.js';
import { HttpError } from '../common/errors.js';
import { payloadNameProblem } from '../common/payload-name.js';
import { connectionState, type ConnectionState } from '../connectors/hcm/oauth/state.js';
import { concurrencyKeyOf } from '../engine/concurrency-key.js';
import { correlationKeyOf, MAX_CORRELATION_KEY_LENGTH } from '../engine/correlation-key.js';
import type { ExecutionRecord, ExecutionStatus, ExecutionVersion } from '../engine/record.js';
import { BusyError } from '../runtime/dispatch/admission.js';
import { versionOf } from '../engine/version.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TriggerHealth } from '../runtime/trigger-health.js';
import { MAX_LIST_LIMIT } from '../store/list-limits.js';
import { STATUSES } from '../store/statuses.js';
import type { Capture, CaptureQuery, CaptureSummary, ExecutionSummary, NewExecution, SavedPayload } from '../store/types.js';
import type { CompiledIntegration } from '../definition/types.js';
import { manualTriggerData } from '../triggers/manual.js';
import { triggerTypeOf } from '../triggers/registry.js';
import { authorizeConnection, resolveConnection } from './oauth.js';
import { KeyedMutex } from '../store/keyed-mutex.js';
import { chunksByTime, parseRetryAgain, parseRetryFilter, RETRYABLE_STATUSES, resumeStepsFor, retryBatch } from './retry.js';
import { integrationView, type IntegrationView } from './views.js';

/** The statuses an execution filter accepts (the store's own list). */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = STATUSES;

/** One OAuth connection of a loaded integration and what it needs (GET /api/connections). */
export interface ConnectionView extends Partial<ConnectionState> {
  integration: string;
  connection: string;
  type: string;
  /** Set when the connection's configuration cannot be evaluated (e.g. a missing env value). */
  error?: string;
}

export class AdminOperations {
  /**
   * Retries in this process one at a time: the check "retried before?" and the retry's enqueue
   * are not one commit, so a double-clicked Retry must not pass the check twice.
   */
  private readonly retries = new KeyedMutex();

  constructor(readonly runtime: Runtime) {}

  // Integrations -------------------------------------------------------------------------------
  integrations(): IntegrationView[] {
    return this.runtime.registry.entries().map((e) => integrationView(this.runtime, e));
  }

  /** One integration with its trigger's details (next run …), listening state and steps. */
  integration(name: string): IntegrationView {
    const entry = this.entry(name);
    const view = integrationView(this.runtime, entry);
    for (const provider of this.runtime.detailProviders) Object.assign(view, provider(name) ?? {});
    view.listening = this.runtime.isListening(name);
    if (entry.integration) {
      if (entry.integration.description) view.description = entry.integration.description;
      // The trigger's settings a person wants to see (no expressions, no secrets), as its type words them.
      view.trigger = { type: entry.integration.trigger.type, ...triggerTypeOf(entry.integration.trigger).summary(entry.integration.trigger) };
      view.steps = entry.integration.steps.map((s) => ({ id: s.id, action: s.action.key }));
    }
    return view;
  }

  /** `integration` plus, for schedules and polls, `health` (GET /api/integrations/{name}, the console's integration page). */
  async integrationDetail(name: string): Promise<IntegrationView> {
    const view = this.integration(name);
    const health = await this.runtime.triggerHealth(view.name);
    if (health) view.health = health;
    return view;
  }

  /** Trigger health of each schedule and poll by name (the console's integrations page). */
  async healthOf(names: string[]): Promise<Map<string, TriggerHealth>> {
    const out = new Map<string, TriggerHealth>();
    await Promise.all(
      names.map(async (name) => {
        const h = await this.runtime.triggerHealth(name);
        if (h) out.set(name, h);
      }),
    );
    return out;
  }

  async run(name: string, payload: unknown, test: boolean): Promise<{ executionId: string }> {
    const integration = this.runnable(name);
    const id = newExecutionId();
    const trigger = manualTriggerData(integration, payload, { executionId: id, webhookUrls: this.runtime.webhookUrls(integration.name) });
    return this.submit({ id, integration: integration.name, trigger, test, attempt: 1, queuedAt: new Date().toISOString() });
  }

  async rotateWebhookToken(name: string): Promise<{ name: string; webhookUrls?: { live: string; test: string } }> {
    const integration = this.runnable(name);
    await this.runtime.tokens.rotate(integration.name);
    return { name: integration.name, webhookUrls: this.runtime.webhookUrls(integration.name) };
  }

  async reload(): Promise<IntegrationView[]> {
    const entries = await this.runtime.reload();
    return entries.map((e) => integrationView(this.runtime, e));
  }

  // Listening mode, captures, saved payloads ---------------------------------------------------
  async setListening(name: string, on: boolean): Promise<{ name: string; listening: boolean; testUrl?: string }> {
    const entry = this.entry(name);
    await this.runtime.setListening(entry.name, on);
    return { name: entry.name, listening: on, testUrl: this.runtime.webhookUrls(entry.name)?.test };
  }

  /** Newest first, each trigger cut to at most 64 KiB (src/store/captures.ts). */
  async captures(name: string, limit = 50): Promise<Capture[]> {
    return this.runtime.store.listCaptures(this.entry(name).name, limit);
  }

  /** Newest first, without bodies; `after` lists only what came after that capture. */
  async captureSummaries(name: string, query: CaptureQuery = {}): Promise<CaptureSummary[]> {
    return this.runtime.store.captureSummaries(this.entry(name).name, query);
  }

  /** One capture as stored (its body cut only past the capture bound). */
  async capture(name: string, id: string): Promise<Capture> {
    const entry = this.entry(name);
    const capture = await this.runtime.store.getCapture(entry.name, id);
    if (!capture) throw new HttpError(404, `no capture "${id}" for ${entry.name} (GET /api/integrations/${entry.name}/captures lists them)`);
    return capture;
  }

  async payloads(name: string): Promise<SavedPayload[]> {
    return this.runtime.store.listPayloads(this.entry(name).name);
  }

  async payload(name: string, payload: string): Promise<SavedPayload> {
    const entry = this.entry(name);
    const saved = await this.runtime.store.getPayload(entry.name, payload);
    if (!saved) throw new HttpError(404, `no saved payload "${payload}" for ${entry.name}`);
    return saved;
  }

  /** `{name, captureId}`, `{name, trigger}` or `{name, payload}` → the saved payload. */
  async savePayload(name: string, body: unknown): Promise<SavedPayload> {
    const entry = this.entry(name);
    const b = body as Record<string, unknown>;
    if (!b || typeof b !== 'object' || typeof b.name !== 'string' || !b.name) {
      throw new HttpError(400, 'send {"name": "...", "captureId": "..."} or {"name", "trigger"} or {"name", "payload"}');
    }
    const problem = payloadNameProblem(b.name);
    if (problem) throw new HttpError(400, problem);
    const trigger = await this.triggerFrom(entry.name, b);
    return this.runtime.store.savePayload(entry.name, b.name, trigger);
  }

  /** Configure payload: replace the saved trigger data (same body forms, or a bare `$trigger`). */
  async updatePayload(name: string, payload: string, body: unknown): Promise<SavedPayload> {
    const entry = this.entry(name);
    await this.payload(name, payload);
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new HttpError(400, 'send {"trigger": {...}} (the whole $trigger) or {"payload": ...} (a JSON body)');
    const b = body as Record<string, unknown>;
    const trigger = await this.triggerFrom(entry.name, 'trigger' in b || 'payload' in b || 'captureId' in b ? b : { trigger: b });
    return this.runtime.store.savePayload(entry.name, payload, trigger);
  }

  async deletePayload(name: string, payload: string): Promise<{ deleted: true }> {
    const entry = this.entry(name);
    if (!(await this.runtime.store.deletePayload(entry.name, payload))) throw new HttpError(404, `no saved payload "${payload}" for ${entry.name}`);
    return { deleted: true };
  }

  /** A test execution with the saved `$trigger` (a fresh executionId and receivedAt). */
  async runPayload(name: string, payload: string): Promise<{ executionId: string }> {
    const integration = this.runnable(name);
    const saved = await this.payload(integration.name, payload);
    const id = newExecutionId();
    const now = new Date().toISOString();
    return this.submit({ id, integration: integration.name, trigger: withExecution(saved.trigger, id, now), test: true, attempt: 1, queuedAt: now });
  }

  // Executions -----------------------------------------------------------------------------------
  async executions(filter: { integration?: string; status?: string; correlation?: string; limit?: number }): Promise<ExecutionSummary[]> {
    const { status } = filter;
    if (status !== undefined && !EXECUTION_STATUSES.includes(status as ExecutionStatus))
      throw new HttpError(400, `status must be one of ${EXECUTION_STATUSES.join(', ')}`);
    if (filter.correlation && filter.correlation.length > MAX_CORRELATION_KEY_LENGTH)
      throw new HttpError(400, `correlation is at most ${MAX_CORRELATION_KEY_LENGTH} characters (no longer key is ever recorded)`);
    const query = {
      integration: filter.integration || undefined,
      status: status as ExecutionStatus | undefined,
      correlation: filter.correlation || undefined,
      limit: filter.limit ?? 50,
    };
    const stored = await this.runtime.store.listExecutions(query);
    // Synchronous runs in progress are in memory only until they finish (dispatcher.submit).
    const live = this.runtime.dispatcher.liveSummaries(query);
    if (live.length === 0) return stored;
    const newestFirst = (a: ExecutionSummary, b: ExecutionSummary) =>
      (b.queuedAt ?? '') > (a.queuedAt ?? '') ? 1 : (b.queuedAt ?? '') < (a.queuedAt ?? '') ? -1 : b.id > a.id ? 1 : -1;
    return [...stored, ...live.filter((l) => !stored.some((s) => s.id === l.id))]
      .sort(newestFirst)
      .slice(0, Math.max(1, Math.min(query.limit, MAX_LIST_LIMIT)));
  }

  /** The newest execution of each integration (the console's start page): one store query. */
  async latestExecutions(names: string[]): Promise<Map<string, ExecutionSummary>> {
    const latest = await this.runtime.store.latestExecutions(names);
    // Synchronous runs in progress are in memory only (as in `executions`).
    for (const live of this.runtime.dispatcher.liveSummaries({})) {
      const stored = latest.get(live.integration);
      if (!stored || (live.queuedAt ?? '') > (stored.queuedAt ?? '')) latest.set(live.integration, live);
    }
    return latest;
  }

  async execution(id: string): Promise<ExecutionRecord> {
    // A run in progress here: its record as it stands (the store has no progress until it ends).
    const record = this.runtime.dispatcher.liveRecord(id) ?? (await this.runtime.store.getExecution(id));
    if (!record) throw new HttpError(404, `no execution "${id}"`);
    return record;
  }

  /** A queued execution's place in its `concurrency:` key's line (undefined: not held back by a key). */
  async aheadInLine(record: ExecutionRecord): Promise<number | undefined> {
    return this.runtime.store.aheadInLine(record);
  }

  /**
   * A new execution with the same trigger data (a fresh `$trigger.executionId`), on the version
   * loaded now: the answer says which (`version`), as the new record will once it runs.
   */
  async replay(id: string): Promise<{ executionId: string; version: ExecutionVersion }> {
    const record = await this.execution(id);
    const integration = this.runnable(record.integration);
    const newId = newExecutionId();
    const version = versionOf(integration);
    const submitted = await this.submit({
      id: newId,
      integration: record.integration,
      trigger: withExecution(record.trigger, newId),
      test: record.test,
      attempt: 1,
      queuedAt: new Date().toISOString(),
    });
    return { ...submitted, version };
  }

  /**
   * `POST /api/executions/{id}/cancel`: a queued or waiting execution is `cancelled` at once, a
   * running one gets `cancelRequested` and stops at its next step boundary. Answers the record after.
   */
  async cancel(id: string): Promise<ExecutionRecord> {
    const outcome = await this.runtime.cancel(id);
    if (outcome.outcome === 'unknown') throw new HttpError(404, `no execution "${id}"`);
    if (outcome.outcome === 'cancelled') this.announce(outcome.record);
    if (outcome.outcome === 'finished')
      throw new HttpError(
        409,
        `execution "${id}" of ${outcome.record.integration} has already finished (${outcome.record.status}): there is nothing to cancel`,
      );
    return outcome.record;
  }

  /**
   * `POST /api/executions/{id}/retry`: a failed or cancelled execution runs again from its failed
   * step as a new execution (`retryOf`), reusing the recorded results of the steps before it, on
   * the version loaded now. Submitted like a replay (backlog 429s apply). One already retried is
   * refused (409 naming its newest retry) unless the body says `{"again": true}`.
   */
  async retry(id: string, body?: unknown): Promise<{ executionId: string; version: ExecutionVersion }> {
    const again = parseRetryAgain(body);
    return this.retries.run('retry', async () => {
      const record = await this.execution(id);
      if (!RETRYABLE_STATUSES.includes(record.status))
        throw new HttpError(
          409,
          `execution "${id}" of ${record.integration} is ${record.status}: only a failed or cancelled execution can be retried (POST /api/executions/${id}/replay runs it again from the start)`,
        );
      const integration = this.retryTarget(record.integration, id);
      if (!again) {
        const newest = (await this.runtime.store.retriesOf([id])).get(id)?.at(-1);
        if (newest !== undefined) {
          const status = (await this.runtime.store.getExecution(newest))?.status ?? 'unknown';
          throw new HttpError(
            409,
            `execution ${id} was already retried as ${newest} (status ${status}); retry ${newest} instead, or send {"again": true} to retry ${id} once more`,
          );
        }
      }
      const newId = newExecutionId();
      const submitted = await this.submit(this.retryOf(record, newId, integration));
      return { ...submitted, version: versionOf(integration) };
    });
  }

  /** The ids of the retries of execution `id`, oldest first (the console's "Retried as"). */
  async retriesOf(id: string): Promise<string[]> {
    return (await this.runtime.store.retriesOf([id])).get(id) ?? [];
  }

  /**
   * `POST /api/executions/retry`: retries every failed (or cancelled) execution matching the
   * filter, newest first, at most 1,000 per call. `more`: others match; `until` is where the next
   * call continues. The originals stay failed: those retried before (by any call) are listed in
   * `alreadyRetried`, not retried again (at most 1,000 of them per call too), so the same filter
   * sent twice does not write twice. Executions of integrations no longer loaded are `skipped`. A full backlog after some were
   * submitted answers those, with `more` and `until` to continue from.
   */
  async retryMatching(body: unknown): Promise<BulkRetry> {
    const filter = parseRetryFilter(body);
    if (filter.integration) this.retryTarget(filter.integration);
    return this.retries.run('retry', () => this.retryBatchOf(filter));
  }

  private async retryBatchOf(filter: ReturnType<typeof parseRetryFilter>): Promise<BulkRetry> {
    const store = this.runtime.store;
    const batch = await retryBatch(
      (f) => store.listExecutions(f),
      filter,
      undefined,
      undefined,
      (ids) => store.retriesOf(ids),
    );
    const out: BulkRetry = { executionIds: [], more: batch.more };
    const skipped: BulkRetry['skipped'] = [];
    let until = batch.until;
    let lastSubmitted: string | undefined;
    for (const chunk of chunksByTime(batch.rows, 100)) {
      const executions: NewExecution[] = [];
      for (const row of chunk) {
        const integration = this.runtime.registry.get(row.integration);
        const record = integration && (await this.runtime.store.getExecution(row.id));
        if (!integration) skipped.push({ executionId: row.id, error: `integration "${row.integration}" is no longer loaded` });
        else if (record && RETRYABLE_STATUSES.includes(record.status)) executions.push(this.retryOf(record, newExecutionId(), integration));
      }
      try {
        for (const e of executions) await this.withKeys(e);
        if (executions.length) await this.runtime.dispatcher.submit(executions);
      } catch (err) {
        // Nothing submitted yet: the caller gets the 429/503 itself; else what was done and where to go on.
        if (!(err instanceof BusyError) || out.executionIds.length === 0) throw err;
        out.more = true;
        until = lastSubmitted;
        break;
      }
      out.executionIds.push(...executions.map((e) => e.id));
      lastSubmitted = chunk[chunk.length - 1]!.queuedAt;
    }
    if (out.more && until) out.until = until;
    if (skipped.length) out.skipped = skipped;
    // A full backlog stopped the call early: only those before its `until` were considered (the
    // next call, from that `until`, lists the others).
    const listed = batch.alreadyRetried
      .filter((a) => until === batch.until || until === undefined || (a.row.queuedAt ?? '') >= until)
      .map((a) => ({ executionId: a.row.id, retriedAs: a.retriedAs }));
    if (listed.length) out.alreadyRetried = listed;
    return out;
  }

  /**
   * Live feeds (console pages, GET /api/events) hear of an execution cancelled at once: no run
   * ended, so the dispatcher announced nothing. A listener's failure never fails the cancel.
   */
  private announce(r: ExecutionRecord): void {
    if (this.runtime.listenerCount('execution') === 0) return;
    try {
      this.runtime.emit('execution', {
        id: r.id,
        integration: r.integration,
        status: r.status,
        test: r.test,
        attempt: r.attempt,
        at: new Date().toISOString(),
      });
    } catch (err) {
      this.runtime.logger?.warn({ err: (err as Error).message }, 'execution event listener failed');
    }
  }

  /** The new execution a retry of `record` submits (its trigger with the new id, its resume steps). */
  private retryOf(record: ExecutionRecord, newId: string, integration: CompiledIntegration): NewExecution {
    return {
      id: newId,
      integration: record.integration,
      trigger: withExecution(record.trigger, newId),
      test: record.test,
      attempt: 1,
      queuedAt: new Date().toISOString(),
      retryOf: record.id,
      steps: resumeStepsFor(integration, record.steps),
      ...(record.concurrencyKey !== undefined ? { concurrencyKey: record.concurrencyKey } : {}),
    };
  }

  /** The integration a retry runs on: loaded now and without errors, else 409 naming it. */
  private retryTarget(name: string, executionId?: string): CompiledIntegration {
    const of = executionId ? ` (of execution "${executionId}")` : '';
    const entry = this.runtime.registry.entry(name);
    if (!entry)
      throw new HttpError(409, `integration "${name}"${of} is no longer loaded, so it cannot be retried (GET /api/integrations lists what is)`);
    return this.runnable(name);
  }

  // OAuth connections ----------------------------------------------------------------------------
  /** Every `hcm-oauth2` connection of the loaded integrations with its state (no secrets). */
  async connections(): Promise<ConnectionView[]> {
    const out: ConnectionView[] = [];
    for (const entry of this.runtime.registry.entries()) {
      const integration = entry.integration;
      if (!integration) continue;
      for (const [connection, def] of Object.entries(integration.connections)) {
        if (def.type !== 'hcm-oauth2') continue;
        const view: ConnectionView = { integration: integration.name, connection, type: def.type };
        try {
          Object.assign(view, await connectionState(await resolveConnection(this.runtime, integration.name, connection), this.runtime.store.tokens));
        } catch (err) {
          view.error = (err as Error).message;
        }
        out.push(view);
      }
    }
    return out;
  }

  /** `consoleOrigin`: the origin the request came to (the callback page links back to its console). */
  async authorize(name: string, connection: string, consoleOrigin?: string): Promise<{ url: string; state: string; redirectUri: string }> {
    return authorizeConnection(this.runtime, name, connection, consoleOrigin);
  }

  // Rules shared by the operations above ---------------------------------------------------------
  private entry(name: string) {
    const entry = this.runtime.registry.entry(name);
    if (!entry) throw new HttpError(404, `no integration named "${name}"`);
    return entry;
  }

  private runnable(name: string) {
    const entry = this.entry(name);
    if (!entry.integration)
      throw new HttpError(409, `integration "${name}" has errors and no good version to run; fix ${entry.file} (see GET /api/integrations/${name})`);
    return entry.integration;
  }

  // Console sessions ---------------------------------------------------------------------------

  /** Ends every console session, on every replica (DELETE /api/console-sessions). */
  async signOutEverywhere(): Promise<{ signedOut: number }> {
    return { signedOut: await this.runtime.store.deleteConsoleSessions() };
  }

  private async submit(execution: NewExecution): Promise<{ executionId: string }> {
    await this.withKeys(execution);
    // A full backlog throws BusyError, an HttpError (429/503 + Retry-After).
    await this.runtime.dispatcher.submit([execution]);
    return { executionId: execution.id };
  }

  /**
   * Run now, saved payloads, replays and retries get their correlation key like a triggered
   * execution, from the version loaded now, and their `concurrency:` key too (a retry keeps its
   * original's when it had one).
   */
  private async withKeys(execution: NewExecution): Promise<void> {
    const integration = this.runtime.registry.get(execution.integration);
    if (integration?.correlationKey)
      execution.correlationKey = await correlationKeyOf(integration, execution.trigger, {
        executionId: execution.id,
        env: this.runtime.env,
        logger: this.runtime.logger,
      });
    // A retry keeps the key of the execution it retries (retryOf): it is the same work, in the same line.
    if (integration?.concurrency && execution.concurrencyKey === undefined)
      execution.concurrencyKey = await concurrencyKeyOf(integration, execution.trigger, {
        executionId: execution.id,
        env: this.runtime.env,
        logger: this.runtime.logger,
      });
  }

  private async triggerFrom(name: string, body: Record<string, unknown>): Promise<unknown> {
    if (typeof body.captureId === 'string') {
      const capture = await this.runtime.store.getCapture(name, body.captureId);
      if (!capture) throw new HttpError(404, `no capture "${body.captureId}" for ${name} (GET /api/integrations/${name}/captures lists them)`);
      if (capture.truncated)
        throw new HttpError(
          409,
          `capture "${capture.id}" of ${name} was stored cut (the request's trigger data was ${capture.size} bytes, more than HCM_RUNNER_CAPTURE_MAX_BYTES), so it cannot be saved as a payload: raise HCM_RUNNER_CAPTURE_MAX_BYTES and send the request again, or save the body with {"name", "payload"}`,
        );
      return capture.trigger;
    }
    if ('trigger' in body) return body.trigger;
    if ('payload' in body) {
      const integration = this.runnable(name);
      return manualTriggerData(integration, body.payload, { webhookUrls: this.runtime.webhookUrls(name) });
    }
    throw new HttpError(400, 'send one of captureId, trigger or payload');
  }
}

/** What `POST /api/executions/retry` answers. */
export interface BulkRetry {
  /** The new executions, newest original first. */
  executionIds: string[];
  /** More executions match than this call retried: call again with `until`. */
  more: boolean;
  /** With `more`: the `until` that continues where this call stopped. */
  until?: string;
  /** Matches not retried: their integration is no longer loaded. */
  skipped?: Array<{ executionId: string; error: string }>;
  /** Matches not retried because they were retried before (`retriedAs`: the newest retry); absent when none. */
  alreadyRetried?: Array<{ executionId: string; retriedAs: string }>;
}

/** `$trigger.executionId` names the execution that runs; a replayed/saved trigger gets the new one. */
function withExecution(trigger: unknown, id: string, receivedAt?: string): unknown {
  if (!trigger || typeof trigger !== 'object' || Array.isArray(trigger) || !('executionId' in trigger)) return trigger;
  const t: Record<string, unknown> = { ...(trigger as Record<string, unknown>), executionId: id };
  if (receivedAt && 'receivedAt' in t) t.receivedAt = receivedAt;
  return t;
}
