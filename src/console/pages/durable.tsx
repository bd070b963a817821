/**
 * What durable execution adds to the console's execution pages: the actions an execution's
 * status allows (Cancel, Retry from failed step, Replay), what a waiting execution waits for
 * (its wake time, or the callback URL with a Copy button), and the bulk retry of the executions
 * page. Every action posts to a console route that calls server/operations.ts.
 */
import type { ExecutionRecord } from '../../engine/record.js';
import { shortId } from '../format.js';
import { PostButton, Time } from './layout.js';

/** Statuses an execution can be cancelled in (and retried from). */
const CANCELLABLE = new Set(['queued', 'waiting', 'running']);
const RETRYABLE = new Set(['failed', 'cancelled']);

export function ExecutionActions(props: { record: ExecutionRecord; retries?: readonly string[] }) {
  const r = props.record;
  const base = `/console/executions/${encodeURIComponent(r.id)}`;
  const retries = props.retries ?? [];
  return (
    <div class="actions">
      {CANCELLABLE.has(r.status) && !r.cancelRequested && <PostButton action={`${base}/cancel`}>Cancel</PostButton>}
      {RETRYABLE.has(r.status) && retries.length === 0 && (
        <PostButton action={`${base}/retry`} primary>
          Retry from failed step
        </PostButton>
      )}
      {RETRYABLE.has(r.status) && retries.length > 0 && (
        // Retried before: a second retry writes again, so it is asked for (and sent as again=true).
        <form
          method="post"
          action={`${base}/retry`}
          class="inline"
          data-confirm={`This execution was already retried as ${retries.map(shortId).join(', ')}. Retry it once more (its steps run again)?`}
        >
          <input type="hidden" name="again" value="true" />
          <button type="submit">Retry again</button>
        </form>
      )}
      <PostButton action={`${base}/replay`} primary={!RETRYABLE.has(r.status)}>
        Replay
      </PostButton>
    </div>
  );
}

/** Facts (`<dt>`/`<dd>` pairs) of a retry and of one retried, a cancel requested and a waiting execution. */
export function DurableFacts(props: { record: ExecutionRecord; retries?: readonly string[] }) {
  const r = props.record;
  const waiting = r.status === 'waiting' ? r.waitingFor : undefined;
  const retries = props.retries ?? [];
  return (
    <>
      {retries.length > 0 && (
        <>
          <dt>Retried as</dt>
          <dd id="retried-as">
            {retries.map((id, i) => (
              <>
                {i > 0 && ', '}
                <a href={`/console/executions/${encodeURIComponent(id)}`}>execution {shortId(id)}</a>
              </>
            ))}
          </dd>
        </>
      )}
      {r.retryOf && (
        <>
          <dt>Retry of</dt>
          <dd>
            <a href={`/console/executions/${encodeURIComponent(r.retryOf)}`}>execution {shortId(r.retryOf)}</a>{' '}
            <span class="muted">(the steps before its failed step were not run again)</span>
          </dd>
        </>
      )}
      {r.cancelRequested && r.status === 'running' && (
        <>
          <dt>Cancel</dt>
          <dd>requested: it stops at its next step boundary</dd>
        </>
      )}
      {r.status === 'waiting' && (
        <>
          <dt>Waits at</dt>
          <dd>
            {waiting ? (
              <>
                step <span class="mono">{waiting.step}</span>, for {waiting.kind === 'callback' ? 'a request to its callback URL' : 'a time'}
              </>
            ) : (
              <span class="muted">a core.wait step</span>
            )}
          </dd>
          {(r.wakeAt || waiting?.timeoutAt) && (
            <>
              <dt>{waiting?.kind === 'callback' ? 'Times out' : 'Wakes'}</dt>
              <dd>
                <Time iso={waiting?.kind === 'callback' ? (waiting.timeoutAt ?? r.wakeAt) : r.wakeAt} />
              </dd>
            </>
          )}
          {waiting?.callbackUrl && (
            <>
              <dt>Callback URL</dt>
              <dd class="copyable">
                <span class="mono wrap">{waiting.callbackUrl}</span>{' '}
                <button type="button" data-copy={waiting.callbackUrl} aria-label="Copy callback URL">
                  Copy
                </button>
              </dd>
            </>
          )}
        </>
      )}
    </>
  );
}

/**
 * The executions page's bulk action: retry every failed (or cancelled) execution of the current
 * integration filter, newest first, at most 1,000 per press. `until`: where the previous press
 * stopped (the originals stay failed, so without it a second press would retry the same ones).
 */
export function BulkRetry(props: { integration?: string; status?: string; until?: string }) {
  const status = props.status === 'cancelled' ? 'cancelled' : props.status === undefined || props.status === 'failed' ? 'failed' : undefined;
  if (!status) return null;
  const which = props.integration ? `of ${props.integration}` : 'of every integration';
  return (
    <form
      method="post"
      action="/console/executions/retry"
      class="inline bulk"
      data-confirm={`Retry every ${status} execution ${which} from its failed step?`}
    >
      {props.integration && <input type="hidden" name="integration" value={props.integration} />}
      <input type="hidden" name="status" value={status} />
      {props.until && <input type="hidden" name="until" value={props.until} />}
      <button type="submit">{props.until ? `Retry the next ${status}` : `Retry ${status}`}</button>
      <span class="muted">
        every {status} execution {which}
        {props.until ? ' queued before the ones just retried' : ''}, from its failed step (1,000 at a time)
      </span>
    </form>
  );
}
