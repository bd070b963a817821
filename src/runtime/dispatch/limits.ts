/**
 * The dispatcher's limits, in one place: how many executions run at once (the worker pool), how
 * many may wait (admission) and how often a process may stop under one (poison.ts), with their
 * defaults. Their values come from the runtime's settings (src/settings/spec.ts), passed in.
 */
import { DEFAULT_MAX_INTERRUPTIONS } from './poison.js';

export interface DispatcherLimits {
  /** Executions running at once in this process (default 16). */
  concurrency: number;
  /** Executions of one integration running at once (default 4). */
  perIntegration: number;
  /** Queued (not running) executions above which new work is refused with "busy" (default 1000). */
  backlog: number;
  /**
   * Queued executions of one integration above which its new work is refused (default half the
   * backlog, HCM_RUNNER_INTEGRATION_BACKLOG): one slow integration cannot fill the whole backlog
   * and starve the others.
   */
  backlogPerIntegration?: number;
  /**
   * An execution the process stopped under this many times is failed instead of resumed (default
   * 3, HCM_RUNNER_MAX_INTERRUPTIONS; see poison.ts).
   */
  maxInterruptions?: number;
  /** Retry-After seconds suggested to refused callers (default 5). */
  retryAfterSec: number;
}

export const DEFAULT_LIMITS: DispatcherLimits = { concurrency: 16, perIntegration: 4, backlog: 1000, retryAfterSec: 5 };

/** The limits in force: the defaults, then what the caller passed (resolved settings). */
export function resolveLimits(given: Partial<DispatcherLimits> | undefined): DispatcherLimits {
  return { ...DEFAULT_LIMITS, ...given };
}

/** Queued executions one integration may have (its share of the backlog). */
export function integrationBacklog(limits: DispatcherLimits): number {
  return limits.backlogPerIntegration ?? Math.max(1, Math.ceil(limits.backlog / 2));
}

/** The most times the process may stop under an execution before it is failed (poison.ts). */
export function maxInterruptions(limits: DispatcherLimits): number {
  return limits.maxInterruptions ?? DEFAULT_MAX_INTERRUPTIONS;
}
