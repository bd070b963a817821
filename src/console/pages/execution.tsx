/**
 * One execution: its facts, a timeline of its steps (a bar per step, placed and sized by time, so a
 * slow step stands out), each step's results or error, trigger data, result and log; Replay.
 */
import type { ExecutionRecord, StepRecord } from '../../engine/record.js';
import { formatDuration, formatJson, shortId } from '../format.js';
import { Badge, Layout, Notice, PostButton, Time } from './layout.js';

export function ExecutionPage(props: { record: ExecutionRecord; notice?: string; error?: string; traceUrl?: string }) {
  const r = props.record;
  const finished = r.status === 'succeeded' || r.status === 'failed';
  return (
    <Layout
      title={`Execution ${shortId(r.id)}`}
      section="executions"
      live={finished ? [] : [{ events: `/console/events?integration=${encodeURIComponent(r.integration)}`, refresh: ['execution'], execution: r.id }]}
    >
      <p class="crumbs">
        <a href="/console/executions">Executions</a> / <a href={`/console/integrations/${encodeURIComponent(r.integration)}`}>{r.integration}</a> /
      </p>
      <div id="execution">
        <div class="title-row">
          <h1>
            Execution <span class="mono">{shortId(r.id)}</span> <Badge status={r.status} />
          </h1>
          <PostButton action={`/console/executions/${encodeURIComponent(r.id)}/replay`} primary>
            Replay
          </PostButton>
        </div>
        <Notice notice={props.notice} error={props.error} />
        <dl class="facts wide">
          <dt>ID</dt>
          <dd class="mono">{r.id}</dd>
          <dt>Integration</dt>
          <dd>
            <a href={`/console/integrations/${encodeURIComponent(r.integration)}`}>{r.integration}</a>
          </dd>
          <dt>Status</dt>
          <dd>{r.status}</dd>
          <dt>Mode</dt>
          <dd>{r.test ? 'test' : 'live'}</dd>
          <dt>Attempt</dt>
          <dd>{r.attempt}</dd>
          {r.idempotencyKey !== undefined && (
            <>
              <dt>Idempotency key</dt>
              <dd class="mono">{r.idempotencyKey}</dd>
            </>
          )}
          <dt>Queued</dt>
          <dd>
            <Time iso={r.queuedAt} />
          </dd>
          <dt>Started</dt>
          <dd>
            <Time iso={r.startedAt} />
          </dd>
          <dt>Finished</dt>
          <dd>
            <Time iso={r.finishedAt} />
          </dd>
          <dt>Duration</dt>
          <dd>{formatDuration(r.durationMs)}</dd>
          {r.traceId && (
            <>
              <dt>Trace</dt>
              <dd class="mono">
                {props.traceUrl ? (
                  <a href={props.traceUrl.replaceAll('{traceId}', encodeURIComponent(r.traceId))} target="_blank" rel="noopener noreferrer">
                    {r.traceId}
                  </a>
                ) : (
                  r.traceId
                )}
              </dd>
            </>
          )}
        </dl>
        {r.error && (
          <p class="error" role="alert">
            {r.error.message}
          </p>
        )}

        <section aria-labelledby="timeline-h">
          <h2 id="timeline-h">Steps</h2>
          {r.steps.length === 0 ? <p class="muted">{finished ? 'No step ran.' : 'Waiting for the first step…'}</p> : <Timeline record={r} />}
        </section>

        {r.steps.map((s) => (
          <section aria-label={`Step ${s.id}`} class="step">
            <h3>
              <span class="mono">{s.id}</span> <Badge status={s.status} /> <span class="muted mono">{s.action}</span>
            </h3>
            {s.error ? (
              <>
                <p class="error">{s.error.message}</p>
                {s.error.remote !== undefined && <pre>{formatJson(s.error.remote)}</pre>}
              </>
            ) : s.results !== undefined ? (
              <pre>{formatJson(s.results)}</pre>
            ) : (
              <p class="muted">No results.</p>
            )}
          </section>
        ))}

        {r.result !== undefined && (
          <section aria-labelledby="result-h">
            <h2 id="result-h">Result</h2>
            <pre>{formatJson(r.result)}</pre>
          </section>
        )}

        <section aria-labelledby="trigger-h">
          <h2 id="trigger-h">Trigger data</h2>
          <pre>{formatJson(r.trigger)}</pre>
        </section>

        <section aria-labelledby="log-h">
          <h2 id="log-h">Log</h2>
          {r.log.length === 0 ? (
            <p class="muted">No log lines.</p>
          ) : (
            <table aria-label="Log" class="log">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Level</th>
                  <th scope="col">Step</th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {r.log.map((l) => (
                  <tr class={`level-${l.level}`}>
                    <td>
                      <Time iso={l.at} />
                    </td>
                    <td>{l.level}</td>
                    <td class="mono">{l.step ?? ''}</td>
                    <td class="wrap">{l.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </Layout>
  );
}

/** A table of steps whose last column is a bar placed at the step's start and as long as it ran. */
function Timeline(props: { record: ExecutionRecord }) {
  const { steps } = props.record;
  const starts = [ms(props.record.startedAt), ...steps.map((s) => ms(s.startedAt))].filter(Number.isFinite);
  const start = starts.length > 0 ? Math.min(...starts) : 0;
  const ends = [ms(props.record.finishedAt), ...steps.map((s) => ms(s.finishedAt ?? s.startedAt))].filter(Number.isFinite);
  const end = ends.length > 0 ? Math.max(...ends) : start;
  const span = Math.max(end - start, 1);
  return (
    <table aria-label="Step timeline" class="timeline">
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
      <tbody>
        {steps.map((s) => {
          const duration = stepDuration(s);
          const left = Number.isFinite(ms(s.startedAt)) ? ((ms(s.startedAt) - start) / span) * 100 : 0;
          const width = Math.max(((duration ?? 0) / span) * 100, 0.5);
          return (
            <tr>
              <td class="mono">{s.id}</td>
              <td class="mono">{s.action}</td>
              <td>
                <Badge status={s.status} />
              </td>
              <td>{formatDuration(duration)}</td>
              <td class="bar-col">
                <div class="track" role="img" aria-label={`${s.id}: ${formatDuration(duration)}`}>
                  <div
                    class={`bar bar-${s.status}`}
                    style={`margin-left:${Math.min(left, 99.5).toFixed(2)}%;width:${Math.min(width, 100 - Math.min(left, 99.5)).toFixed(2)}%`}
                  />
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function stepDuration(s: StepRecord): number | undefined {
  // A skipped step did not run: it has no duration (its few microseconds of `if` are not one).
  if (s.status === 'skipped') return undefined;
  if (s.durationMs !== undefined) return s.durationMs;
  if (s.finishedAt) return ms(s.finishedAt) - ms(s.startedAt);
  return undefined;
}

function ms(iso: string | undefined): number {
  return iso ? Date.parse(iso) : NaN;
}
