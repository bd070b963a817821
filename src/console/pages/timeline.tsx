/**
 * The execution page's nested timeline (docs/console.md "An execution"): a row per step with a bar
 * placed where it started and as long as it ran, all bars on one time axis (the execution's); a
 * group's steps indented under it, a forEach group's iterations each a collapsible <details>
 * (so parallel iterations show as overlapping bars), a switch's case, core.call's child links.
 * Bounded: a record with 100,000 iterations draws at most ITERATIONS_SHOWN of a group and
 * ROWS_SHOWN rows in all; the admin API has the rest.
 */
import type { ExecutionRecord, IterationRecord, StepRecord, StepStatus } from '../../engine/record.js';
import { formatDuration, shortId } from '../format.js';
import { Badge } from './layout.js';

/** Iterations drawn per forEach group. */
export const ITERATIONS_SHOWN = 100;
/** Rows (steps and iterations) drawn per timeline, whatever the nesting. */
export const ROWS_SHOWN = 1000;

/** The time axis and the row budget, shared by every table of one page. */
export interface Axis {
  executionId: string;
  start: number;
  span: number;
  rows: number;
}

/** One axis for the whole record: from its (or its first step's) start to its last finish, onFailure included. */
export function axisOf(r: ExecutionRecord): Axis {
  const top = [...r.steps, ...(r.onFailure?.steps ?? [])];
  const starts = [ms(r.startedAt), ...top.map((s) => ms(s.startedAt))].filter(Number.isFinite);
  const start = starts.length > 0 ? Math.min(...starts) : 0;
  const ends = [ms(r.finishedAt), ...top.map((s) => ms(s.finishedAt ?? s.startedAt))].filter(Number.isFinite);
  const end = ends.length > 0 ? Math.max(...ends) : start;
  return { executionId: r.id, start, span: Math.max(end - start, 1), rows: ROWS_SHOWN };
}

/** A table of steps; `label` names it for screen readers (and browser tests). */
export function Timeline(props: { steps: StepRecord[]; axis: Axis; label: string; showErrors?: boolean }) {
  return (
    <table aria-label={props.label} class="timeline">
      <Columns />
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Action</th>
          <th scope="col">Status</th>
          <th scope="col">Duration</th>
          <th scope="col" class="bar-col">
            Timeline
          </th>
        </tr>
      </thead>
      <tbody>{stepRows(props.steps, props.axis, 0, props.showErrors === true)}</tbody>
    </table>
  );
}

/** Fixed column widths, the same in every nested table, so that all bars share one axis. */
function Columns() {
  return (
    <colgroup>
      <col class="c-step" />
      <col class="c-action" />
      <col class="c-status" />
      <col class="c-duration" />
      <col class="c-bar" />
    </colgroup>
  );
}

function stepRows(steps: StepRecord[], axis: Axis, depth: number, showErrors: boolean) {
  const rows = [];
  for (const [i, s] of steps.entries()) {
    if (axis.rows <= 0) {
      rows.push(<NotDrawn depth={depth} text={`${count(steps.length - i)} more steps`} axis={axis} />);
      break;
    }
    axis.rows--;
    rows.push(<StepRow s={s} axis={axis} depth={depth} />);
    // A leaf's own error; a group's is the same error again, already shown on its failed step.
    if (s.error && (showErrors || depth > 0) && !s.steps && !s.iterations)
      rows.push(
        <tr class="row-error">
          <td colspan={5} style={indent(depth)}>
            <span class="error">{s.error.message}</span>
          </td>
        </tr>,
      );
    const nested = s.iterations ? (
      <Iterations s={s} axis={axis} depth={depth + 1} showErrors={showErrors} />
    ) : s.steps ? (
      <table aria-label={`Steps of ${s.id}`} class="timeline nested">
        <Columns />
        <tbody>{stepRows(s.steps, axis, depth + 1, showErrors)}</tbody>
      </table>
    ) : undefined;
    if (nested)
      rows.push(
        <tr class="nest">
          <td colspan={5}>{nested}</td>
        </tr>,
      );
  }
  return rows;
}

function StepRow(props: { s: StepRecord; axis: Axis; depth: number }) {
  const { s, axis, depth } = props;
  const duration = stepDuration(s);
  return (
    <tr class={depth > 0 ? 'inner' : undefined}>
      <td class="mono wrap" style={indent(depth)}>
        {s.id}
      </td>
      <td class="wrap">
        <span class="mono">{s.action}</span>
        {s.case !== undefined && (
          <>
            {' '}
            <span class="case">
              case <b>{s.case}</b>
            </span>
          </>
        )}
        <ChildLinks s={s} />
      </td>
      <td>
        <Badge status={s.status} />
      </td>
      <td>{formatDuration(duration)}</td>
      <td class="bar-col">
        <Bar label={`${s.id}: ${formatDuration(duration)}`} status={s.status} startedAt={s.startedAt} duration={duration} axis={axis} />
      </td>
    </tr>
  );
}

/** core.call's child execution; with forEach, one per item (labelled by index, bounded). */
function ChildLinks(props: { s: StepRecord }) {
  const { childExecutionId, childExecutionIds } = props.s;
  if (childExecutionId)
    return (
      <span class="children">
        {' '}
        → <a href={`/console/executions/${encodeURIComponent(childExecutionId)}`}>child execution {shortId(childExecutionId)}</a>
      </span>
    );
  if (!childExecutionIds?.length) return null;
  const shown = childExecutionIds.slice(0, ITERATIONS_SHOWN);
  return (
    <span class="children">
      {' '}
      → child executions:{' '}
      {shown.map((id, i) =>
        // A sparse array when a later item started first and an earlier one never did.
        id ? (
          <>
            <a href={`/console/executions/${encodeURIComponent(id)}`} aria-label={`child execution ${i}: ${shortId(id)}`}>
              [{i}]
            </a>{' '}
          </>
        ) : undefined,
      )}
      {childExecutionIds.length > shown.length && <span class="muted">and {count(childExecutionIds.length - shown.length)} more</span>}
    </span>
  );
}

/** A forEach group's iterations: each a <details> whose summary carries the iteration's own bar. */
function Iterations(props: { s: StepRecord; axis: Axis; depth: number; showErrors: boolean }) {
  const { s, axis, depth, showErrors } = props;
  const all = s.iterations!;
  const drawn = [];
  for (const it of all) {
    if (drawn.length >= ITERATIONS_SHOWN || axis.rows <= 0) break;
    axis.rows--;
    drawn.push(it);
  }
  return (
    <ul class="iterations" aria-label={`Iterations of ${s.id}`}>
      {drawn.map((it) => {
        const span = iterationSpan(it);
        const status = iterationStatus(it);
        return (
          <li>
            <details class="iteration" open={status === 'failed' || status === 'running'}>
              <summary class="iteration-row">
                <span class="mono" style={indent(depth)}>
                  iteration {it.index}
                </span>
                <span class="muted">{count(it.steps.length)} steps</span>
                <span>
                  <Badge status={status} />
                </span>
                <span>{formatDuration(span?.duration)}</span>
                <span class="bar-col">
                  <Bar
                    label={`${s.id} iteration ${it.index}: ${formatDuration(span?.duration)}`}
                    status={status}
                    startedAt={span?.startedAt}
                    duration={span?.duration}
                    axis={axis}
                  />
                </span>
              </summary>
              <table aria-label={`${s.id} iteration ${it.index}`} class="timeline nested">
                <Columns />
                <tbody>{stepRows(it.steps, axis, depth + 1, showErrors)}</tbody>
              </table>
            </details>
          </li>
        );
      })}
      {all.length > drawn.length && (
        <li class="not-drawn muted" style={indent(depth)}>
          … and {count(all.length - drawn.length)} more iterations, not drawn here: <code>GET /api/executions/{axis.executionId}</code> has all of
          them.
        </li>
      )}
    </ul>
  );
}

function NotDrawn(props: { depth: number; text: string; axis: Axis }) {
  return (
    <tr class="not-drawn">
      <td colspan={5} class="muted" style={indent(props.depth)}>
        … and {props.text}, not drawn here: <code>GET /api/executions/{props.axis.executionId}</code> has all of them.
      </td>
    </tr>
  );
}

function Bar(props: { label: string; status: string; startedAt: string | undefined; duration: number | undefined; axis: Axis }) {
  const { axis } = props;
  const at = ms(props.startedAt);
  const left = Math.min(Number.isFinite(at) ? ((at - axis.start) / axis.span) * 100 : 0, 99.5);
  const width = Math.min(Math.max(((props.duration ?? 0) / axis.span) * 100, 0.5), 100 - left);
  return (
    <div class="track" role="img" aria-label={props.label}>
      <div class={`bar bar-${props.status}`} style={`margin-left:${Math.max(left, 0).toFixed(2)}%;width:${width.toFixed(2)}%`} />
    </div>
  );
}

/** An iteration ran from its first step's start to its last step's finish. */
function iterationSpan(it: IterationRecord): { startedAt: string; duration: number } | undefined {
  let first = Infinity;
  let firstIso = '';
  let last = -Infinity;
  for (const s of it.steps) {
    const at = ms(s.startedAt);
    if (at < first) {
      first = at;
      firstIso = s.startedAt;
    }
    const end = s.finishedAt ? ms(s.finishedAt) : at + (stepDuration(s) ?? 0);
    if (end > last) last = end;
  }
  return Number.isFinite(first) && Number.isFinite(last) ? { startedAt: firstIso, duration: Math.max(last - first, 0) } : undefined;
}

function iterationStatus(it: IterationRecord): StepStatus {
  const statuses = new Set(it.steps.map((s) => s.status));
  if (statuses.has('failed')) return 'failed';
  if (statuses.has('running')) return 'running';
  if (statuses.size === 0 || (statuses.size === 1 && statuses.has('skipped'))) return 'skipped';
  return 'succeeded';
}

export function stepDuration(s: StepRecord): number | undefined {
  // A skipped step did not run: it has no duration (its few microseconds of `if` are not one).
  if (s.status === 'skipped') return undefined;
  if (s.durationMs !== undefined) return s.durationMs;
  if (s.finishedAt) return ms(s.finishedAt) - ms(s.startedAt);
  return undefined;
}

/** Nesting shows as indentation of the first cell (the tables themselves stay full width: one axis). */
function indent(depth: number): string | undefined {
  return depth > 0 ? `padding-left:${10 + Math.min(depth, 12) * 18}px` : undefined;
}

function ms(iso: string | undefined): number {
  return iso ? Date.parse(iso) : NaN;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
