/**
 * One execution: its facts (and the execution that called it), a nested timeline of its steps (a
 * bar per step, placed and sized by time, so a slow step stands out; see ./timeline.tsx), each
 * top-level step's results or error, what onFailure did, trigger data, result and log; Cancel,
 * Retry from failed step and Replay, and what a waiting execution waits for (./durable.tsx).
 */
import { WHOLE_INTEGRATION_KEY } from '../../engine/concurrency-key.js';
import type { ExecutionRecord, ExecutionVersion } from '../../engine/record.js';
import { formatDuration, formatJson, shortId } from '../format.js';
import { DurableFacts, ExecutionActions } from './durable.js';
import { Badge, Layout, Notice, Time } from './layout.js';
import { axisOf, Timeline } from './timeline.js';

export function ExecutionPage(props: {
  record: ExecutionRecord;
  /** The ids of this execution's retries, oldest first. */
  retries?: readonly string[];
  /** Queued behind its `concurrency:` key: how many of the key are ahead of it. */
  ahead?: number;
  notice?: string;
  error?: string;
  traceUrl?: string;
}) {
  const r = props.record;
  const finished = r.status === 'succeeded' || r.status === 'failed' || r.status === 'cancelled';
  const axis = axisOf(r);
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
          <ExecutionActions record={r} retries={props.retries} />
        </div>
        <Notice notice={props.notice} error={props.error} />
        {props.ahead !== undefined && props.ahead > 0 && (
          <p class="notice" id="key-line">
            Waiting for its concurrency key <span class="mono">{lineName(r.concurrencyKey)}</span>: {props.ahead} ahead of it (running, waiting or
            queued before it).
          </p>
        )}
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
          {r.correlationKey !== undefined && (
            <>
              <dt>Correlation key</dt>
              <dd class="wrap">
                <a href={`/console/executions?correlation=${encodeURIComponent(r.correlationKey)}`}>{r.correlationKey}</a>
              </dd>
            </>
          )}
          {r.concurrencyKey !== undefined && (
            <>
              <dt>Concurrency key</dt>
              <dd class="mono wrap">{lineName(r.concurrencyKey)}</dd>
            </>
          )}
          <dt>Version</dt>
          <dd class="wrap">
            <VersionFacts version={r.version} />
          </dd>
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
          <DurableFacts record={r} retries={props.retries} />
          {r.parent && (
            <>
              <dt>Called by</dt>
              <dd>
                <a href={`/console/executions/${encodeURIComponent(r.parent.executionId)}`}>parent execution {shortId(r.parent.executionId)}</a>, step{' '}
                <span class="mono">{r.parent.step}</span>
              </dd>
            </>
          )}
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
          {r.steps.length === 0 ? (
            <p class="muted">{finished ? 'No step ran.' : 'Waiting for the first step…'}</p>
          ) : (
            <Timeline steps={r.steps} axis={axis} label="Step timeline" />
          )}
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
            ) : s.steps || s.iterations ? (
              <p class="muted">Its steps are in the timeline above.</p>
            ) : s.results !== undefined ? (
              <pre>{formatJson(s.results)}</pre>
            ) : (
              <p class="muted">No results.</p>
            )}
          </section>
        ))}

        {r.onFailure && (
          <section aria-labelledby="onfailure-h">
            <h2 id="onfailure-h">
              On failure <Badge status={r.onFailure.status} />
            </h2>
            <p class="muted">
              The <code>onFailure</code> steps ran once, after the execution had failed; their outcome does not change its status.
            </p>
            {r.onFailure.error && (
              <p class="error" role="alert">
                {r.onFailure.error.message}
              </p>
            )}
            {r.onFailure.steps.length === 0 ? (
              <p class="muted">No step ran.</p>
            ) : (
              <Timeline steps={r.onFailure.steps} axis={axis} label="onFailure timeline" showErrors />
            )}
          </section>
        )}

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

/** Which version of the file ran: its sha256 and the checkout's commit (shortened, the whole on hover). */
function VersionFacts(props: { version?: ExecutionVersion }) {
  const v = props.version;
  if (!v) return <span class="muted">not recorded (it has not started)</span>;
  return (
    <span class="mono">
      <span title={v.sha256}>sha256 {v.sha256.slice(0, 12)}</span>
      {v.commit && <span title={v.commit}>{` · commit ${v.commit.slice(0, 12)}`}</span>}
    </span>
  );
}

/** The key as shown: `concurrency: {limit}` without a key lines up the whole integration. */
function lineName(key: string | undefined): string {
  return key === WHOLE_INTEGRATION_KEY ? '* (the whole integration)' : (key ?? '');
}
