/**
 * The store's behaviour, written once over a SQL dialect (dialect.ts): every statement comes from
 * plans.ts, every row goes through the mappers below. The SQLite and PostgreSQL stores extend it
 * with what belongs to their engine: opening and migrating, the group-committed hot paths
 * (enqueue, saves), the queue, and how locks reach across processes.
 */
import type { StoredTokens, TokenStore } from '../../connectors/types.js';
import type { CallbackRequest } from '../../engine/durable.js';
import type { ExecutionRecord, ExecutionStatus } from '../../engine/record.js';
import { captureColumns, DEFAULT_CAPTURE_KEEP, summaryFields } from '../captures.js';
import { runningRecord } from '../execution-states.js';
import { recordFromRow, summaryFromRow } from '../execution-rows.js';
import { clampLimit } from '../list-limits.js';
import { newStats, type StoreStats } from '../stats.js';
import { checkFilter, emptyCounts } from '../statuses.js';
import { iso } from '../timestamps.js';
import { newWebhookToken } from '../webhook-token.js';
import type { ExecutionQueue, QueueOptions } from '../queue.js';
import type { TokenCipher } from '../token-crypto.js';
import type {
  CallbackEntry,
  CallbackReceipt,
  CancelOutcome,
  Capture,
  CaptureBounds,
  CaptureQuery,
  CaptureSummary,
  ExecutionFilter,
  ExecutionSummary,
  IdempotencyClaim,
  NewExecution,
  SavedPayload,
  SaveOptions,
  Store,
} from '../types.js';
import type { SqlDialect, Step, StepResult } from './dialect.js';
import * as plan from './plans.js';

type Row = Record<string, unknown>;

/** Removes duplicate keys, keeping each key's last position (the newest). */
function dedupeKeepLast(keys: readonly string[]): string[] {
  const last = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) last.set(keys[i]!, i);
  return keys.filter((k, i) => last.get(k) === i);
}

/** Integrations per `latestExecutions` statement. */
const LATEST_CHUNK = 500;

export abstract class SqlStore implements Store {
  abstract readonly kind: 'sqlite' | 'postgres';
  readonly stats: StoreStats = newStats();
  readonly tokens: TokenStore;
  protected closed = false;

  protected constructor(
    protected readonly d: SqlDialect,
    cipher: () => Promise<TokenCipher>,
    /** How `tokens.withLock` excludes other holders of the key (in-process, or across replicas). */
    withTokenLock: <T>(key: string, fn: () => Promise<T>) => Promise<T>,
  ) {
    this.tokens = new SqlTokenStore(this, cipher, withTokenLock);
  }

  abstract close(): Promise<void>;
  abstract openQueue(opts?: QueueOptions): ExecutionQueue;
  abstract enqueue(executions: NewExecution[]): Promise<void>;
  abstract enqueueOnce(execution: NewExecution, claim: IdempotencyClaim): Promise<{ executionId: string; duplicate: boolean }>;
  abstract saveExecution(record: ExecutionRecord, opts?: SaveOptions): Promise<void>;
  abstract commitPoll(integration: string, keys: string[], maxSeen: number, executions: NewExecution[]): Promise<void>;
  abstract lock<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Exactly once per row cluster-wide: each engine its own way (one writer; SKIP LOCKED). */
  abstract wakeDue(now: Date, limit: number): Promise<ExecutionRecord[]>;
  /** One transaction with a decision in the middle: each engine runs it on its own connection. */
  abstract receiveCallback(token: string, request: CallbackRequest, now: Date): Promise<CallbackReceipt>;

  protected read<R = Row>(sql: string, params: unknown[] = []): Promise<R[]> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.d.read<R>(sql, params);
  }

  protected write(kind: string, steps: Step[]) {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.d.write(kind, steps);
  }

  // Row mappers -----------------------------------------------------------------------------------

  protected record(row: Row): ExecutionRecord {
    return recordFromRow(row as never, (v) => this.d.json(v));
  }

  protected callback(row: Row): CallbackEntry {
    const entry: CallbackEntry = {
      token: String(row.token),
      executionId: String(row.execution_id),
      integration: String(row.integration),
      step: String(row.step),
      test: !!row.test,
      expiresAt: iso(row.expires_at as string | Date)!,
    };
    if (row.request != null) entry.request = this.d.json(row.request) as CallbackRequest;
    if (row.received_at != null) entry.receivedAt = iso(row.received_at as string | Date)!;
    return entry;
  }

  private capture(row: Row): Capture {
    return {
      id: String(row.id),
      integration: String(row.integration),
      receivedAt: iso(row.received_at as string | Date)!,
      trigger: this.d.json(row.trigger),
      size: Number(row.size),
      truncated: !!row.truncated,
    };
  }

  private captureSummary(row: Row): CaptureSummary {
    const fields = row.summary === null || row.summary === undefined ? summaryFields(this.d.json(row.trigger)) : this.d.json(row.summary);
    return {
      ...(fields as Pick<CaptureSummary, 'method' | 'path' | 'contentType' | 'preview'>),
      id: String(row.id),
      integration: String(row.integration),
      receivedAt: iso(row.received_at as string | Date)!,
      size: Number(row.size),
      truncated: !!row.truncated,
    };
  }

  private payload(row: Row): SavedPayload {
    return {
      integration: String(row.integration),
      name: String(row.name),
      trigger: this.d.json(row.trigger),
      createdAt: iso(row.created_at as string | Date)!,
      updatedAt: iso(row.updated_at as string | Date)!,
    };
  }

  // Executions ------------------------------------------------------------------------------------

  async markRunning(id: string, attempt: number): Promise<ExecutionRecord | undefined> {
    const now = new Date().toISOString();
    const [r] = await this.write('markRunning', [plan.markRunning(id, attempt, now)]);
    const row = r!.rows[0];
    return row ? runningRecord(this.record(row), attempt, now) : undefined;
  }

  async getExecution(id: string): Promise<ExecutionRecord | undefined> {
    const [row] = await this.read(plan.getExecution, [id]);
    return row ? this.record(row) : undefined;
  }

  async listExecutions(filter: ExecutionFilter = {}): Promise<ExecutionSummary[]> {
    checkFilter(filter);
    const q = plan.listExecutions({
      integration: filter.integration,
      status: filter.status,
      correlation: filter.correlation,
      since: filter.since === undefined ? undefined : iso(filter.since),
      before: filter.before === undefined ? undefined : iso(filter.before),
      limit: clampLimit(filter.limit),
    });
    return (await this.read(q.sql, q.params)).map((r) => summaryFromRow(r as never));
  }

  async latestExecutions(integrations: readonly string[]): Promise<Map<string, ExecutionSummary>> {
    const out = new Map<string, ExecutionSummary>();
    const names = [...new Set(integrations)];
    // Chunks keep the statement's parameter count far below every engine's limit.
    for (let i = 0; i < names.length; i += LATEST_CHUNK) {
      const chunk = names.slice(i, i + LATEST_CHUNK);
      for (const r of await this.read(plan.latestExecutions(chunk.length), chunk)) {
        const summary = summaryFromRow(r as never);
        out.set(summary.integration, summary);
      }
    }
    return out;
  }

  async unfinishedExecutions(): Promise<ExecutionRecord[]> {
    return (await this.read(plan.unfinishedExecutions)).map((r) => this.record(r));
  }

  async aheadInLine(record: ExecutionRecord): Promise<number | undefined> {
    if (record.status !== 'queued' || record.concurrencyKey === undefined || !record.queuedAt) return undefined;
    const [row] = await this.read<{ n: number | string }>(plan.aheadInLine, [
      record.integration,
      record.concurrencyKey,
      record.queuedAt,
      record.queuedAt,
      record.id,
    ]);
    return Number(row?.n ?? 0);
  }

  /** Waiting executions with a `concurrency:` key (the in-process queue's start: they keep their slots). */
  async waitingKeyHolders(): Promise<Array<{ id: string; integration: string; concurrencyKey: string }>> {
    const rows = await this.read<{ id: string; integration: string; concurrency_key: string }>(plan.waitingKeyHolders);
    return rows.map((r) => ({ id: r.id, integration: r.integration, concurrencyKey: r.concurrency_key }));
  }

  async countByStatus(): Promise<Record<ExecutionStatus, number>> {
    const counts = emptyCounts();
    for (const r of await this.read<{ status: ExecutionStatus; n: number | string }>(plan.countByStatus))
      if (r.status in counts) counts[r.status] = Number(r.n);
    return counts;
  }

  /** Also forgets claimed schedule/poll ticks older than `before`. */
  async pruneExecutions(before: Date): Promise<number> {
    const [r] = await this.write('prune', plan.prune(before.toISOString()));
    return r!.changes;
  }

  // Durable execution -----------------------------------------------------------------------------

  async nextWakeAt(): Promise<string | undefined> {
    const [row] = await this.read<{ wake_at: string | Date | null }>(plan.nextWakeAt);
    return iso(row?.wake_at ?? undefined);
  }

  async countWaiting(integration: string): Promise<number> {
    const [row] = await this.read<{ n: number | string }>(plan.countWaiting, [integration]);
    return Number(row?.n ?? 0);
  }

  async createCallback(entry: CallbackEntry): Promise<void> {
    await this.write('callback', [
      plan.createCallback({
        token: entry.token,
        executionId: entry.executionId,
        integration: entry.integration,
        step: entry.step,
        test: !!entry.test,
        expiresAt: iso(entry.expiresAt)!,
        request: entry.request === undefined ? null : JSON.stringify(entry.request),
        receivedAt: iso(entry.receivedAt) ?? null,
      }),
    ]);
  }

  async getCallback(token: string): Promise<CallbackEntry | undefined> {
    const [row] = await this.read(plan.getCallback, [token]);
    return row ? this.callback(row) : undefined;
  }

  /** What `receiveCallback` answers once its request was recorded or not (`recorded`: the execution it woke). */
  protected callbackReceipt(recorded: string | undefined, existing: Row | undefined, now: string): CallbackReceipt {
    if (recorded !== undefined) return { outcome: 'accepted', executionId: recorded };
    // Expired counts before used: the URL is gone either way (404, not 409).
    if (!existing || iso(existing.expires_at as string | Date)! <= now) return { outcome: 'unknown' };
    if (existing.received_at != null) return { outcome: 'used', executionId: String(existing.execution_id) };
    // Not recorded, not expired, not used: it expired between the two statements.
    return { outcome: 'unknown' };
  }

  async pruneCallbacks(now: Date): Promise<number> {
    const [r] = await this.write('prune', [plan.pruneCallbacks(now.toISOString())]);
    return r!.changes;
  }

  async cancelExecution(id: string, now: Date): Promise<CancelOutcome> {
    // A row that moved between the statements (running → waiting on another replica) is tried again.
    for (let tries = 0; tries < 3; tries++) {
      const [cancelled, requested, current] = await this.write('cancel', plan.cancelExecution(id, now.toISOString()));
      if (cancelled!.rows[0]) return { outcome: 'cancelled', record: this.record(cancelled!.rows[0]) };
      if (requested!.rows[0]) return { outcome: 'requested', record: this.record(requested!.rows[0]) };
      const row = current!.rows[0];
      if (!row) return { outcome: 'unknown' };
      const record = this.record(row);
      if (record.status === 'succeeded' || record.status === 'failed' || record.status === 'cancelled') return { outcome: 'finished', record };
    }
    throw new Error(`execution ${id} changed state while it was being cancelled; try again`);
  }

  async cancelRequested(ids: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += LATEST_CHUNK) {
      const chunk = unique.slice(i, i + LATEST_CHUNK);
      for (const r of await this.read<{ id: string }>(plan.cancelRequested(chunk.length), [...chunk, true])) out.push(r.id);
    }
    return out;
  }

  async retriesOf(ids: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += LATEST_CHUNK) {
      const chunk = unique.slice(i, i + LATEST_CHUNK);
      for (const r of await this.read<{ retry_of: string; id: string }>(plan.retriesOf(chunk.length), chunk)) {
        const list = out.get(r.retry_of);
        if (list) list.push(r.id);
        else out.set(r.retry_of, [r.id]);
      }
    }
    return out;
  }

  /** The claim's steps for `enqueueOnce` (its key, kind and window). */
  protected claimSteps(execution: NewExecution, claim: IdempotencyClaim): Step[] {
    const now = Date.now();
    return plan.claimIdempotencyKey(
      {
        integration: execution.integration,
        kind: execution.test ? 'test' : 'live',
        key: claim.key,
        executionId: execution.id,
        expiresAt: new Date(now + claim.windowMs).toISOString(),
      },
      new Date(now).toISOString(),
    );
  }

  /** What the claim's steps answered: whether this execution holds the key, else which one does. */
  protected claimOutcome(execution: NewExecution, results: StepResult[]): { executionId: string; duplicate: boolean } {
    if (results[0]!.rows.length > 0) return { executionId: execution.id, duplicate: false };
    const holder = results[1]!.rows[0];
    if (!holder) throw new Error(`idempotency key of execution ${execution.id} neither claimed nor held`);
    return { executionId: String(holder.execution_id), duplicate: true };
  }

  async pruneIdempotencyKeys(now: Date): Promise<number> {
    const [r] = await this.write('prune', [plan.pruneIdempotencyKeys(now.toISOString())]);
    return r!.changes;
  }

  // Webhook tokens --------------------------------------------------------------------------------

  async webhookToken(integration: string): Promise<string> {
    const [existing] = await this.read<{ token: string }>(plan.tokenOf, [integration]);
    if (existing) return existing.token;
    const [, r] = await this.write('webhookToken', plan.createToken(integration, newWebhookToken(), new Date().toISOString()));
    return String(r!.rows[0]!.token);
  }

  async rotateWebhookToken(integration: string): Promise<string> {
    const [r] = await this.write('webhookToken', [plan.rotateToken(integration, newWebhookToken(), new Date().toISOString())]);
    return String(r!.rows[0]!.token);
  }

  async integrationForToken(token: string): Promise<string | undefined> {
    const [row] = await this.read<{ integration: string }>(plan.integrationForToken, [token]);
    return row?.integration;
  }

  // Listening, captures, payloads -----------------------------------------------------------------

  async setListening(integration: string, on: boolean): Promise<void> {
    await this.write('listening', [plan.setListening(integration, on, new Date().toISOString())]);
  }

  async isListening(integration: string): Promise<boolean> {
    return (await this.read(plan.isListening, [integration])).length > 0;
  }

  async listeningIntegrations(): Promise<string[]> {
    return (await this.read<{ integration: string }>(plan.listeningIntegrations)).map((r) => r.integration);
  }

  async addCapture(capture: Capture, bounds: CaptureBounds = {}): Promise<CaptureSummary> {
    const receivedAt = iso(capture.receivedAt) ?? new Date().toISOString();
    const { columns, summary } = captureColumns({ ...capture, receivedAt }, bounds.maxBytes);
    await this.write(
      'capture',
      plan.addCapture(
        { integration: capture.integration, id: capture.id, receivedAt, ...columns },
        Math.max(0, Math.floor(bounds.keep ?? DEFAULT_CAPTURE_KEEP)),
      ),
    );
    return summary;
  }

  async listCaptures(integration: string, limit = DEFAULT_CAPTURE_KEEP): Promise<Capture[]> {
    return (await this.read(plan.listCaptures, [integration, clampLimit(limit, DEFAULT_CAPTURE_KEEP)])).map((r) => this.capture(r));
  }

  async captureSummaries(integration: string, query: CaptureQuery = {}): Promise<CaptureSummary[]> {
    const rows = await this.read(plan.captureSummaries, [
      integration,
      integration,
      query.after ?? null,
      clampLimit(query.limit, DEFAULT_CAPTURE_KEEP),
    ]);
    return rows.map((r) => this.captureSummary(r));
  }

  async getCapture(integration: string, id: string): Promise<Capture | undefined> {
    const [row] = await this.read(plan.getCapture, [integration, id]);
    return row ? this.capture(row) : undefined;
  }

  async savePayload(integration: string, name: string, trigger: unknown): Promise<SavedPayload> {
    const [r] = await this.write('payload', [plan.savePayload(integration, name, JSON.stringify(trigger ?? null), new Date().toISOString())]);
    return this.payload(r!.rows[0]!);
  }

  async getPayload(integration: string, name: string): Promise<SavedPayload | undefined> {
    const [row] = await this.read(plan.getPayload, [integration, name]);
    return row ? this.payload(row) : undefined;
  }

  async listPayloads(integration: string): Promise<SavedPayload[]> {
    return (await this.read(plan.listPayloads, [integration])).map((r) => this.payload(r));
  }

  async deletePayload(integration: string, name: string): Promise<boolean> {
    const [r] = await this.write('payload', [plan.deletePayload(integration, name)]);
    return r!.changes > 0;
  }

  // Trigger state ---------------------------------------------------------------------------------

  async getState(integration: string, key: string): Promise<unknown> {
    const [row] = await this.read<{ value: unknown }>(plan.getState, [integration, key]);
    return row ? this.d.json(row.value) : undefined;
  }

  async setState(integration: string, key: string, value: unknown): Promise<void> {
    if (value === undefined) return this.deleteState(integration, key);
    await this.write('state', [plan.setState(integration, key, JSON.stringify(value), new Date().toISOString())]);
  }

  /** Without `key`: all of the integration's trigger state (not its poll seen-set). */
  async deleteState(integration: string, key?: string): Promise<void> {
    await this.write('state', [plan.deleteState(integration, key)]);
  }

  async takeState(integration: string, key: string): Promise<unknown> {
    const [r] = await this.write('state', [plan.takeState(integration, key)]);
    const row = r!.rows[0];
    return row ? this.d.json(row.value) : undefined;
  }

  async seenKeys(integration: string): Promise<Set<string>> {
    return new Set((await this.read<{ key: string }>(plan.seenKeys, [integration])).map((r) => r.key));
  }

  /** The seen-set part of commitPoll: later keys in `keys` count as newer; keys seen again become the newest. */
  protected seenSteps(integration: string, keys: string[], maxSeen: number): Step[] {
    return plan.commitSeen(integration, dedupeKeepLast(keys), Math.max(0, Math.floor(maxSeen)));
  }

  async claimTick(integration: string, tick: string): Promise<boolean> {
    const [r] = await this.write('tick', [plan.claimTick(integration, tick, new Date().toISOString())]);
    return r!.changes === 1;
  }

  // Console sessions ------------------------------------------------------------------------------

  async addConsoleSession(id: string, expiresAt: string): Promise<void> {
    await this.write('consoleSession', plan.addConsoleSession(id, iso(expiresAt)!, new Date().toISOString()));
  }

  async hasConsoleSession(id: string): Promise<boolean> {
    return (await this.read(plan.hasConsoleSession, [id, new Date().toISOString()])).length > 0;
  }

  async deleteConsoleSession(id: string): Promise<boolean> {
    const [r] = await this.write('consoleSession', [plan.deleteConsoleSession(id)]);
    return r!.changes > 0;
  }

  async deleteConsoleSessions(): Promise<number> {
    const [r] = await this.write('consoleSession', [plan.deleteConsoleSessions()]);
    return r!.changes;
  }

  // Tokens (used by SqlTokenStore) ----------------------------------------------------------------

  /** @internal */
  async _getTokenBlob(key: string): Promise<string | undefined> {
    const [row] = await this.read<{ blob: string }>(plan.getTokenBlob, [key]);
    return row?.blob;
  }

  /** @internal */
  async _setTokenBlob(key: string, blob: string | undefined): Promise<void> {
    await this.write('tokens', [plan.setTokenBlob(key, blob, new Date().toISOString())]);
  }
}

/**
 * Connection tokens, encrypted at rest in the `tokens` table. What this process last read or
 * wrote is remembered, decrypted, for `peek` (the HCM request path: no round trip and no
 * decryption per call); `get` always reads the table.
 */
class SqlTokenStore implements TokenStore {
  private readonly recent = new Map<string, { tokens: StoredTokens; at: number }>();
  /** Bumped by every set/delete of a key, so a read that started before one does not overwrite what it wrote. */
  private readonly writes = new Map<string, number>();

  constructor(
    private readonly store: SqlStore,
    private readonly cipher: () => Promise<TokenCipher>,
    private readonly withTokenLock: <T>(key: string, fn: () => Promise<T>) => Promise<T>,
  ) {}

  async get(key: string): Promise<StoredTokens | undefined> {
    const gen = this.writes.get(key) ?? 0;
    const blob = await this.store._getTokenBlob(key);
    const tokens = blob === undefined ? undefined : (await this.cipher()).decrypt<StoredTokens>(blob);
    if ((this.writes.get(key) ?? 0) === gen) this.remember(key, tokens);
    return tokens;
  }

  peek(key: string, maxAgeMs: number): StoredTokens | undefined {
    const r = this.recent.get(key);
    return r && Date.now() - r.at < maxAgeMs ? r.tokens : undefined;
  }

  async set(key: string, tokens: StoredTokens): Promise<void> {
    const gen = this.wrote(key);
    await this.store._setTokenBlob(key, (await this.cipher()).encrypt(tokens));
    if (this.writes.get(key) === gen) this.remember(key, tokens);
  }

  async delete(key: string): Promise<void> {
    this.wrote(key);
    await this.store._setTokenBlob(key, undefined);
  }

  private wrote(key: string): number {
    this.recent.delete(key);
    const gen = (this.writes.get(key) ?? 0) + 1;
    this.writes.set(key, gen);
    return gen;
  }

  private remember(key: string, tokens: StoredTokens | undefined): void {
    if (tokens) this.recent.set(key, { tokens: { ...tokens }, at: Date.now() });
    else this.recent.delete(key);
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.withTokenLock(key, fn);
  }
}
