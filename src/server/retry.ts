/**
 * The rules of "retry from the failed step" that do not need the runtime (docs/server.md,
 * `POST /api/executions/{id}/retry` and `POST /api/executions/retry`): what a retry resumes from
 * in the integration as loaded now, the bulk filter a caller sends, and which executions one bulk
 * call takes (at most 1,000, newest first, never splitting executions queued in the same
 * millisecond, so the `until` it answers continues exactly where it stopped).
 */
import { HttpError } from '../common/errors.js';
import { allSteps } from '../definition/control-flow.js';
import type { CompiledIntegration } from '../definition/types.js';
import type { ExecutionStatus, StepRecord } from '../engine/record.js';
import { stepsBeforeFailure } from '../engine/resume.js';
import { MAX_LIST_LIMIT } from '../store/list-limits.js';
import type { ExecutionFilter, ExecutionSummary } from '../store/types.js';

/** Executions one `POST /api/executions/retry` retries at most. */
export const MAX_BULK_RETRY = 1000;

/** The statuses a retry starts from: the execution ended without finishing its steps. */
export const RETRYABLE_STATUSES: readonly ExecutionStatus[] = ['failed', 'cancelled'];

/** Longest integration name a bulk filter may carry (no file name is longer). */
const MAX_NAME_LENGTH = 256;

/**
 * The step records a retry of `steps` resumes from, judged by the integration as loaded now:
 * a failed step whose current definition says `onError: continue` did not stop the execution.
 */
export function resumeStepsFor(integration: CompiledIntegration, steps: readonly StepRecord[]): StepRecord[] {
  const continued = new Set(
    allSteps(integration)
      .filter((s) => s.onError === 'continue')
      .map((s) => s.id),
  );
  // Ids are unique in a file; a nested record may carry a path (`group.step`): its last part is the id.
  return stepsBeforeFailure(steps, (id) => continued.has(id) || continued.has(id.slice(id.lastIndexOf('.') + 1)));
}

/** A bulk retry's filter, checked: `status` failed or cancelled, times as canonical ISO strings. */
export interface RetryFilter {
  integration?: string;
  status: ExecutionStatus;
  /** Queued at or after. */
  since?: string;
  /** Queued before (the store's `before`). */
  until?: string;
}

const FILTER_KEYS = ['integration', 'status', 'since', 'until'];

/** The JSON body of `POST /api/executions/retry` → a RetryFilter; 400 naming the field that is wrong. */
export function parseRetryFilter(body: unknown): RetryFilter {
  if (body === undefined || body === null) return { status: 'failed' };
  if (typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'send a JSON object {"integration"?, "status"?: "failed"|"cancelled", "since"?, "until"?}');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !FILTER_KEYS.includes(k));
  if (unknown !== undefined) throw new HttpError(400, `unknown field "${unknown.slice(0, 64)}": the filter takes ${FILTER_KEYS.join(', ')}`);
  const filter: RetryFilter = { status: 'failed' };
  if (b.integration !== undefined) {
    if (typeof b.integration !== 'string' || b.integration === '' || b.integration.length > MAX_NAME_LENGTH)
      throw new HttpError(400, `integration must be an integration's name (a non-empty string of at most ${MAX_NAME_LENGTH} characters)`);
    filter.integration = b.integration;
  }
  if (b.status !== undefined) {
    if (typeof b.status !== 'string' || !RETRYABLE_STATUSES.includes(b.status as ExecutionStatus))
      throw new HttpError(400, `status must be ${RETRYABLE_STATUSES.join(' or ')} (only those executions can be retried)`);
    filter.status = b.status as ExecutionStatus;
  }
  for (const field of ['since', 'until'] as const) {
    const v = b[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.length > 64 || Number.isNaN(Date.parse(v)))
      throw new HttpError(400, `${field} must be an ISO-8601 time, e.g. "2026-11-26T09:00:00Z"`);
    // Stored times are canonical ISO strings compared as text: "2026-11-26" must become one too.
    filter[field] = new Date(v).toISOString();
  }
  if (filter.since && filter.until && filter.since >= filter.until)
    throw new HttpError(400, `since (${filter.since}) must be before until (${filter.until})`);
  return filter;
}

/** Which executions a bulk call takes; `until` (when `more`) is the filter's `until` for the next call. */
export interface RetryBatch {
  rows: ExecutionSummary[];
  more: boolean;
  until?: string;
}

/**
 * The newest executions matching `filter`, at most `cap`, read page by page from the store
 * (`list`: newest first, `before` exclusive). Executions queued in the same millisecond are taken
 * together or not at all (unless more than `cap` share one), so `until` = the oldest taken's
 * queue time leaves nothing out and takes nothing twice.
 */
export async function retryBatch(
  list: (filter: ExecutionFilter) => Promise<ExecutionSummary[]>,
  filter: RetryFilter,
  cap = MAX_BULK_RETRY,
  pageSize = MAX_LIST_LIMIT,
): Promise<RetryBatch> {
  const rows: ExecutionSummary[] = [];
  const seen = new Set<string>();
  let before = filter.until;
  // One row past the cap says whether more match.
  while (rows.length <= cap) {
    const page = await list({ integration: filter.integration, status: filter.status, since: filter.since, before, limit: pageSize });
    const fresh = page.filter((r) => !seen.has(r.id));
    for (const r of fresh) {
      seen.add(r.id);
      rows.push(r);
    }
    if (page.length < pageSize) break;
    const oldest = page[page.length - 1]!.queuedAt!;
    // Next page: from the oldest row's millisecond again (rows sharing it may be on either side;
    // `seen` drops the repeats), unless a whole page was that millisecond — then past it.
    before = fresh.length === 0 || page[0]!.queuedAt === oldest ? oldest : afterMs(oldest);
  }
  if (rows.length <= cap) return { rows, more: false };
  const boundary = rows[cap]!.queuedAt;
  const whole = rows.slice(0, cap).filter((r) => r.queuedAt !== boundary);
  const taken = whole.length > 0 ? whole : rows.slice(0, cap);
  return { rows: taken, more: true, until: taken[taken.length - 1]!.queuedAt };
}

/** The rows cut into groups of about `size` for submitting, never splitting one millisecond. */
export function chunksByTime(rows: readonly ExecutionSummary[], size: number): ExecutionSummary[][] {
  const out: ExecutionSummary[][] = [];
  let chunk: ExecutionSummary[] = [];
  for (const r of rows) {
    if (chunk.length >= size && chunk[chunk.length - 1]!.queuedAt !== r.queuedAt) {
      out.push(chunk);
      chunk = [];
    }
    chunk.push(r);
  }
  if (chunk.length) out.push(chunk);
  return out;
}

function afterMs(iso: string): string {
  return new Date(Date.parse(iso) + 1).toISOString();
}
