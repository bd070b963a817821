/**
 * The rules of "retry from the failed step" that do not need the runtime (docs/server.md,
 * `POST /api/executions/{id}/retry` and `POST /api/executions/retry`): what a retry resumes from
 * in the integration as loaded now, the bulk filter a caller sends, and which executions one bulk
 * call takes (at most 1,000, newest first, never splitting executions queued in the same
 * millisecond, so the `until` it answers continues exactly where it stopped; those retried
 * before are listed, not retried again).
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

/**
 * The JSON body of `POST /api/executions/{id}/retry`: none, `{}` or `{"again": true}` (retry an
 * execution that was already retried once more); anything else 400.
 */
export function parseRetryAgain(body: unknown): boolean {
  if (body === undefined || body === null) return false;
  if (typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'send no body, {} or {"again": true}');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => k !== 'again');
  if (unknown !== undefined) throw new HttpError(400, `unknown field "${unknown.slice(0, 64)}": a retry takes only "again"`);
  if (b.again !== undefined && typeof b.again !== 'boolean') throw new HttpError(400, 'again must be true or false');
  return b.again === true;
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

/** A match a bulk call does not retry: it was retried before (`retriedAs`: its newest retry). */
export interface AlreadyRetried {
  row: ExecutionSummary;
  retriedAs: string;
}

/** Which executions a bulk call takes; `until` (when `more`) is the filter's `until` for the next call. */
export interface RetryBatch {
  /** The matches to retry. */
  rows: ExecutionSummary[];
  /** The matches skipped because they were retried before (listed, never retried again). */
  alreadyRetried: AlreadyRetried[];
  more: boolean;
  until?: string;
}

/** The retries of each of `ids` that has any, oldest first (the store's `retriesOf`). */
export type RetriesOf = (ids: readonly string[]) => Promise<Map<string, string[]>>;

const noRetries: RetriesOf = async () => new Map();

/**
 * The newest executions matching `filter`, read page by page from the store (`list`: newest
 * first, `before` exclusive): at most `cap` to retry and at most `cap` already retried (`retriesOf`
 * says which; they are listed, not retried, so pressing "Retry failed" twice does not write twice).
 * The call stops at whichever fills first. Executions queued in the same millisecond are taken
 * together or not at all (unless more than `cap` share one), so `until` = the oldest taken's
 * queue time leaves nothing out and considers nothing twice.
 */
export async function retryBatch(
  list: (filter: ExecutionFilter) => Promise<ExecutionSummary[]>,
  filter: RetryFilter,
  cap = MAX_BULK_RETRY,
  pageSize = MAX_LIST_LIMIT,
  retriesOf: RetriesOf = noRetries,
): Promise<RetryBatch> {
  // Every match considered, newest first, with its newest retry when it has one.
  const considered: Array<{ row: ExecutionSummary; retriedAs?: string }> = [];
  const seen = new Set<string>();
  let fresh = 0;
  let already = 0;
  let before = filter.until;
  // One row past either cap says whether more match.
  while (fresh <= cap && already <= cap) {
    const page = await list({ integration: filter.integration, status: filter.status, since: filter.since, before, limit: pageSize });
    const unseen = page.filter((r) => !seen.has(r.id));
    const retries = unseen.length ? await retriesOf(unseen.map((r) => r.id)) : new Map<string, string[]>();
    for (const r of unseen) {
      seen.add(r.id);
      const retriedAs = retries.get(r.id)?.at(-1);
      considered.push(retriedAs === undefined ? { row: r } : { row: r, retriedAs });
      if (retriedAs === undefined) fresh++;
      else already++;
    }
    if (page.length < pageSize) break;
    const oldest = page[page.length - 1]!.queuedAt!;
    // Next page: from the oldest row's millisecond again (rows sharing it may be on either side;
    // `seen` drops the repeats), unless a whole page was that millisecond — then past it.
    before = unseen.length === 0 || page[0]!.queuedAt === oldest ? oldest : afterMs(oldest);
  }
  const split = (rows: typeof considered): RetryBatch => ({
    rows: rows.filter((c) => c.retriedAs === undefined).map((c) => c.row),
    alreadyRetried: rows.flatMap((c) => (c.retriedAs === undefined ? [] : [{ row: c.row, retriedAs: c.retriedAs }])),
    more: false,
  });
  // The first row past a cap (of either kind), if any.
  let stop = -1;
  for (let i = 0, f = 0, a = 0; i < considered.length; i++) {
    if (considered[i]!.retriedAs === undefined) f++;
    else a++;
    if (f > cap || a > cap) {
      stop = i;
      break;
    }
  }
  if (stop < 0) return split(considered);
  const boundary = considered[stop]!.row.queuedAt;
  const whole = considered.slice(0, stop).filter((c) => c.row.queuedAt !== boundary);
  const taken = whole.length > 0 ? whole : considered.slice(0, stop);
  return { ...split(taken), more: true, until: taken[taken.length - 1]!.row.queuedAt };
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
