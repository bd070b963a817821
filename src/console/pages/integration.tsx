/**
 * One integration: trigger, URLs, Run with a payload, listening mode with live captures, saved
 * payloads, steps and recent executions.
 */
import type { CaptureSummary, ExecutionSummary, SavedPayload } from '../../store/types.js';
import type { IntegrationView } from '../../server/views.js';
import { findTriggerType } from '../../triggers/registry.js';
import { formatBytes, formatJson, preview } from '../format.js';
import { HealthFacts } from './health.js';
import { Problems } from './integrations.js';
import { Badge, ExecutionsTable, Layout, type Live, Notice, PostButton, Time } from './layout.js';

export interface IntegrationPageProps {
  view: IntegrationView;
  executions: ExecutionSummary[];
  /** Summaries only: the page never holds a captured body (each capture opens on its own page). */
  captures: CaptureSummary[];
  payloads: SavedPayload[];
  notice?: string;
  error?: string;
  /** Re-shown after a failed run (e.g. malformed JSON), with the editor open. */
  runPayload?: string;
}

export function IntegrationPage(props: IntegrationPageProps) {
  const { view } = props;
  const name = view.name;
  const base = `/console/integrations/${encodeURIComponent(name)}`;
  // The labels, Run help and listening mode come from the trigger's type. A file that never
  // loaded has no known type: its Run help is the webhook's (as POST …/run would read a payload).
  const type = findTriggerType(view.trigger.type);
  const labels = type?.console.labels ?? {};
  const runHelp = (type ?? findTriggerType('webhook'))?.console.runHelp;
  const acceptsWebhooks = !!type?.webhook;
  const live: Live[] = [{ events: `/console/events?integration=${encodeURIComponent(name)}`, refresh: ['recent-executions'] }];
  // A capture re-reads the capture list alone (summaries), not the whole page.
  if (view.listening) live.push({ events: `${base}/captures/stream`, refresh: ['captures'], source: `${base}/captures` });
  const steps = (view.steps as Array<{ id: string; action: string }> | undefined) ?? [];
  return (
    <Layout title={name} section="integrations" live={live} canonical={base}>
      <p class="crumbs">
        <a href="/console/">Integrations</a> /
      </p>
      <h1>
        {name} <Badge status={view.status} />
        {view.health && view.health.status !== 'ok' && <Badge status={view.health.status} />}
      </h1>
      {typeof view.description === 'string' && <p>{view.description}</p>}
      <Notice notice={props.notice} error={props.error} />
      {view.errors && (
        <section aria-labelledby="problems-h">
          <h2 id="problems-h">Problems</h2>
          <Problems errors={view.errors} />
          {view.status === 'error' && view.steps !== undefined && <p class="muted">The last good version keeps running until the file is fixed.</p>}
        </section>
      )}

      <div class="columns">
        <section aria-labelledby="trigger-h">
          <h2 id="trigger-h">Trigger</h2>
          <dl class="facts">
            <dt>Type</dt>
            <dd>{view.trigger.type}</dd>
            <dt>Enabled</dt>
            <dd>{view.enabled ? 'yes' : 'no'}</dd>
            {Object.entries(view.trigger)
              .filter(([k]) => k !== 'type')
              .map(([k, v]) => (
                <>
                  <dt>{labels[k] ?? k}</dt>
                  <dd>{Array.isArray(v) ? v.join(', ') : String(v)}</dd>
                </>
              ))}
            {'lastPoll' in view && <LastPoll poll={view.lastPoll as LastPollView} />}
            {'nextRunAt' in view && (
              <>
                <dt>Next run</dt>
                <dd>{view.nextRunAt ? <Time iso={view.nextRunAt as string} /> : <span class="muted">not scheduled</span>}</dd>
              </>
            )}
            {view.health && <HealthFacts health={view.health} />}
            <dt>File</dt>
            <dd class="wrap mono">{view.file}</dd>
          </dl>
          {view.webhookUrls && <WebhookUrls urls={view.webhookUrls} />}
        </section>

        <section aria-labelledby="steps-h">
          <h2 id="steps-h">Steps</h2>
          {steps.length === 0 ? (
            <p class="muted">None: the file has never loaded. Fix its problems; the integration loads as soon as the file is saved.</p>
          ) : (
            <table aria-label="Steps">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">ID</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {steps.map((s, i) => (
                  <tr>
                    <td>{i + 1}</td>
                    <td class="mono">{s.id}</td>
                    <td class="mono">{s.action}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>

      <section aria-labelledby="test-h">
        <h2 id="test-h">Test</h2>
        <p class="muted">{runHelp}</p>
        <button type="button" class="primary" data-opens="run-editor" hidden={props.runPayload !== undefined}>
          Run
        </button>
        <form id="run-editor" method="post" action={`${base}/run`} class="editor" hidden={props.runPayload === undefined}>
          <label for="run-payload">Payload (JSON)</label>
          <textarea id="run-payload" name="payload" rows={8} spellcheck={false}>
            {props.runPayload ?? '{}'}
          </textarea>
          <div class="buttons">
            <button type="submit" class="primary">
              Run
            </button>
            <button type="button" data-closes="run-editor">
              Cancel
            </button>
          </div>
        </form>
      </section>

      {acceptsWebhooks && (
        <section aria-labelledby="listening-h">
          <h2 id="listening-h">Listening mode</h2>
          <form method="post" action={`${base}/listen`} class="inline">
            <input type="hidden" name="on" value={view.listening ? 'false' : 'true'} />
            <span>{view.listening ? 'Listening: requests to the test URL are captured below as they arrive.' : 'Not listening.'}</span>{' '}
            <button type="submit">{view.listening ? 'Stop listening' : 'Start listening'}</button>
          </form>
          <Captures base={base} captures={props.captures} listening={!!view.listening} />
        </section>
      )}

      <section aria-labelledby="payloads-h">
        <h2 id="payloads-h">Saved payloads</h2>
        <SavedPayloads base={base} payloads={props.payloads} />
      </section>

      <section aria-labelledby="recent-h">
        <h2 id="recent-h">Recent executions</h2>
        <ExecutionsTable id="recent-executions" label="Recent executions" executions={props.executions} />
        <p>
          <a href={`/console/executions?integration=${encodeURIComponent(name)}`}>All executions of {name}</a>
        </p>
      </section>
    </Layout>
  );
}

function WebhookUrls(props: { urls: { live: string; test: string } }) {
  return (
    <table aria-label="Webhook URLs" class="urls">
      <tbody>
        {(['live', 'test'] as const).map((kind) => (
          <tr>
            <th scope="row">{kind === 'live' ? 'Live URL' : 'Test URL'}</th>
            <td class="wrap mono">{props.urls[kind]}</td>
            <td>
              <button type="button" data-copy={props.urls[kind]} aria-label={`Copy ${kind} URL`}>
                Copy
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The captured requests (summaries), newest first; also served alone for the page's live refresh. */
export function Captures(props: { base: string; captures: CaptureSummary[]; listening: boolean }) {
  return (
    <div id="captures">
      {props.captures.length === 0 ? (
        <p class="muted">{props.listening ? 'Waiting for requests to the test URL…' : 'No captured requests.'}</p>
      ) : (
        <table aria-label="Captured requests">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Request</th>
              <th scope="col">Save</th>
            </tr>
          </thead>
          <tbody>
            {props.captures.map((c) => (
              <tr data-capture-id={c.id}>
                <td>
                  <Time iso={c.receivedAt} />
                </td>
                <td class="wrap">
                  <code>{`${c.method ?? ''} ${c.path ?? ''} ${c.preview}`.trim()}</code>
                  <br />
                  <a href={`${props.base}/captures/${encodeURIComponent(c.id)}`} class="muted">
                    Trigger data ({formatBytes(c.size)}
                    {c.truncated ? ', stored cut' : ''})
                  </a>
                </td>
                <td>{c.truncated ? <span class="muted">Too large to save as a payload</span> : <SaveCapture base={props.base} capture={c} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** The Save-as-payload form of one capture (its list row and its own page). */
export function SaveCapture(props: { base: string; capture: { id: string; receivedAt: string } }) {
  const c = props.capture;
  return (
    <form method="post" action={`${props.base}/payloads`} class="inline">
      <input type="hidden" name="captureId" value={c.id} />
      <label class="visually-hidden" for={`name-${c.id}`}>
        Name
      </label>
      <input id={`name-${c.id}`} name="name" value={defaultName(c)} required size={18} />
      <button type="submit">Save as payload</button>
    </form>
  );
}

function SavedPayloads(props: { base: string; payloads: SavedPayload[] }) {
  if (props.payloads.length === 0) return <p class="muted">None yet: save a captured request, or use the admin API (POST …/payloads).</p>;
  return (
    <table aria-label="Saved payloads">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Request</th>
          <th scope="col">Updated</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.payloads.map((p, i) => {
          const path = `${props.base}/payloads/${encodeURIComponent(p.name)}`;
          return (
            <>
              <tr>
                <td class="mono">{p.name}</td>
                <td class="wrap">
                  <code>{requestLine(p.trigger)}</code>
                </td>
                <td>
                  <Time iso={p.updatedAt} />
                </td>
                <td class="actions">
                  <PostButton action={`${path}/run`} primary label={`Run payload ${p.name}`}>
                    Run payload
                  </PostButton>
                  <button type="button" data-opens={`edit-${i}`}>
                    Edit
                  </button>
                  <PostButton action={`${path}/delete`}>Delete</PostButton>
                </td>
              </tr>
              <tr id={`edit-${i}`} hidden>
                <td colspan={4}>
                  <form method="post" action={path} class="editor">
                    <label for={`edit-text-${i}`}>Trigger data of {p.name} ($trigger, JSON)</label>
                    <textarea id={`edit-text-${i}`} name="trigger" rows={10} spellcheck={false}>
                      {formatJson(p.trigger, Infinity)}
                    </textarea>
                    <div class="buttons">
                      <button type="submit" class="primary">
                        Save changes
                      </button>
                      <button type="button" data-closes={`edit-${i}`}>
                        Cancel
                      </button>
                    </div>
                  </form>
                </td>
              </tr>
            </>
          );
        })}
      </tbody>
    </table>
  );
}

/** `POST /fragment {"a":1}` from a webhook `$trigger`, else a JSON preview. */
function requestLine(trigger: unknown): string {
  const t = trigger as { method?: unknown; pathFragment?: unknown; body?: { data?: unknown }; rawBody?: unknown } | undefined;
  if (t && typeof t === 'object' && typeof t.method === 'string') {
    const body = t.body && typeof t.body === 'object' ? preview(t.body.data, 400) : typeof t.rawBody === 'string' ? preview(t.rawBody, 400) : '';
    return `${t.method}${typeof t.pathFragment === 'string' && t.pathFragment ? ` /${t.pathFragment}` : ''} ${body}`.trim();
  }
  return preview(trigger, 400);
}

interface LastPollView {
  status: string;
  polledAt: string;
  items?: number;
  newItems?: number;
  error?: string;
}

/** Whether the last poll worked, when, and what failed. */
function LastPoll(props: { poll: LastPollView | undefined }) {
  const p = props.poll;
  if (!p) return null;
  return (
    <>
      <dt>Last poll</dt>
      <dd>
        <Badge status={p.status} /> <Time iso={p.polledAt} />
        {p.status === 'failed' ? (
          <span class="error"> {p.error}</span>
        ) : p.items !== undefined ? (
          <span class="muted">
            {' '}
            {p.items} items, {p.newItems ?? 0} new
          </span>
        ) : null}
      </dd>
    </>
  );
}

function defaultName(c: { receivedAt: string }): string {
  return `capture-${c.receivedAt.slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
}
