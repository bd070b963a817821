/**
 * Trigger health of schedules and polls (docs/operations.md "Trigger health"): when each last ran
 * and last succeeded, how many runs in a row failed, and from that whether it is **failing** or
 * **stalled**. GET /api/integrations/{name} (`health`), the two /metrics gauges and the console's
 * marks all read `TriggerHealthTracker.health`, so the rules below exist once.
 *
 * What counts: a tick or a poll is a run (`lastRunAt`). A poll that failed (its request, its
 * `items`/`key`, a full backlog) or a tick that could not start its execution is a failed run, a
 * poll that found nothing new a successful one; a poll with new items and a tick succeed or fail
 * with the executions they started. Every non-test execution of the integration (Run now and
 * replays too) counts as a success or failure when it ends, without moving `lastRunAt`.
 *
 * Kept in the store (trigger state `health`), so it survives restarts and every replica sees the
 * same: outcomes are gathered in memory and written per integration one write at a time under the
 * store's cluster-wide lock, so a burst (a poll's thousand new items ending) costs a few writes.
 */
import type { Logger } from 'pino';
import type { ExecutionRecord } from '../engine/record.js';
import type { Store } from '../store/types.js';
import type { TriggerRunOutcome } from '../triggers/host.js';
import type { TickSchedule } from '../triggers/type.js';

/** Trigger state key of the stored health (next to `schedule`, `poll`). */
export const HEALTH_STATE_KEY = 'health';
/** Runs in a row that failed before the trigger is marked failing. */
export const FAILING_AFTER = 3;
/** Periods without a run before the trigger is marked stalled. */
export const STALLED_AFTER_PERIODS = 3;
/** Slack after the third missed tick before it counts (a tick takes a moment to record): one period, at most a minute. */
const MAX_STALL_SLACK_MS = 60_000;

/** What the store keeps. */
export interface StoredHealth {
  lastRunAt?: string;
  lastSuccessAt?: string;
  consecutiveFailures: number;
  lastError?: { message: string; at: string; executionId?: string };
}

/** `health` of GET /api/integrations/{name}. */
export interface TriggerHealth {
  lastRunAt: string | null;
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  nextRunAt: string | null;
  /** `failing`: the last FAILING_AFTER runs failed; `stalled`: no run for STALLED_AFTER_PERIODS periods (wins over failing). */
  status: 'ok' | 'failing' | 'stalled';
  /** The latest failure (kept after a recovery; the console shows it while failing). */
  lastError?: { message: string; at: string; executionId?: string };
}

/** Outcomes gathered since the last write: applied to the stored health as one. */
interface Pending {
  lastRunAt?: string;
  lastSuccessAt?: string;
  /** A success came: the stored count starts again from `failures`. */
  reset: boolean;
  failures: number;
  lastError?: StoredHealth['lastError'];
}

const later = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a >= b ? a : b);

export class TriggerHealthTracker {
  private readonly pending = new Map<string, Pending>();
  private readonly writing = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly logger?: Logger,
  ) {}

  /** A tick or poll ran (written soon, in the background): it moves `lastRunAt`. */
  noteRun(name: string, outcome: TriggerRunOutcome): void {
    this.note(name, outcome, true);
  }

  /** A non-test execution of the integration ended: it succeeds or fails for the trigger, without moving `lastRunAt`. */
  noteExecution(record: ExecutionRecord): void {
    if (record.status !== 'succeeded' && record.status !== 'failed') return;
    this.note(
      record.integration,
      { status: record.status, at: record.finishedAt ?? new Date().toISOString(), error: record.error?.message, executionId: record.id },
      false,
    );
  }

  private note(name: string, outcome: TriggerRunOutcome, ran: boolean): void {
    let p = this.pending.get(name);
    if (!p) {
      p = { reset: false, failures: 0 };
      this.pending.set(name, p);
    }
    if (ran) p.lastRunAt = later(p.lastRunAt, outcome.at);
    if (outcome.status === 'succeeded') {
      p.lastSuccessAt = later(p.lastSuccessAt, outcome.at);
      p.reset = true;
      p.failures = 0;
    } else if (outcome.status === 'failed') {
      p.failures++;
      p.lastError = { message: outcome.error ?? 'failed', at: outcome.at, ...(outcome.executionId ? { executionId: outcome.executionId } : {}) };
    }
    this.write(name);
  }

  /** The health as stored, or undefined when it never ran. */
  async stored(name: string): Promise<StoredHealth | undefined> {
    const v = (await this.store.getState(name, HEALTH_STATE_KEY)) as StoredHealth | undefined;
    return v && typeof v === 'object' ? v : undefined;
  }

  /** The health as the API, the gauges and the console show it. */
  async health(name: string, schedule: TickSchedule, now: number): Promise<TriggerHealth> {
    return healthOf(await this.stored(name), schedule, now);
  }

  /** Resolves when what was noted so far is written (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.writing.size) await Promise.all(this.writing.values());
  }

  private write(name: string): void {
    if (this.writing.has(name)) return; // the write in progress starts the next one
    const done = (async () => {
      await new Promise((r) => setImmediate(r)); // outcomes noted in the same turn go in one write
      const p = this.pending.get(name);
      this.pending.delete(name);
      if (!p) return;
      try {
        await this.store.lock(`trigger-health:${name}`, async () => {
          await this.store.setState(name, HEALTH_STATE_KEY, merge(await this.stored(name), p));
        });
      } catch (err) {
        this.logger?.warn({ integration: name, err: (err as Error).message }, 'trigger health could not be recorded');
      }
    })().finally(() => {
      this.writing.delete(name);
      if (this.pending.has(name)) this.write(name);
    });
    this.writing.set(name, done);
  }
}

function merge(s: StoredHealth | undefined, p: Pending): StoredHealth {
  const out: StoredHealth = {
    consecutiveFailures: p.reset ? p.failures : (s?.consecutiveFailures ?? 0) + p.failures,
  };
  const lastRunAt = later(s?.lastRunAt, p.lastRunAt);
  const lastSuccessAt = later(s?.lastSuccessAt, p.lastSuccessAt);
  const lastError = p.lastError ?? s?.lastError;
  if (lastRunAt) out.lastRunAt = lastRunAt;
  if (lastSuccessAt) out.lastSuccessAt = lastSuccessAt;
  if (lastError) out.lastError = lastError;
  return out;
}

/** The one place failing and stalled are decided. */
export function healthOf(s: StoredHealth | undefined, schedule: TickSchedule, now: number): TriggerHealth {
  const consecutiveFailures = s?.consecutiveFailures ?? 0;
  const due = schedule.dueBy(s?.lastRunAt ? new Date(s.lastRunAt) : undefined, STALLED_AFTER_PERIODS);
  const stalled = !!due && now > due.at.getTime() + Math.min(due.periodMs, MAX_STALL_SLACK_MS);
  const h: TriggerHealth = {
    lastRunAt: s?.lastRunAt ?? null,
    lastSuccessAt: s?.lastSuccessAt ?? null,
    consecutiveFailures,
    nextRunAt: schedule.nextRunAt ?? null,
    status: stalled ? 'stalled' : consecutiveFailures >= FAILING_AFTER ? 'failing' : 'ok',
  };
  if (s?.lastError) h.lastError = s.lastError;
  return h;
}
