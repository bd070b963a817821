/** The page frame every console page shares, and small pieces several pages use. */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ExecutionSummary } from '../../store/types.js';
import { formatDuration, formatTime, shortId } from '../format.js';

export type Section = 'integrations' | 'executions' | 'connections';

/**
 * What the page's script keeps live: `events` is a server-sent-events URL; on each event (and
 * once when the stream opens) the elements with the ids in `refresh` are re-read from the server:
 * from `source` (a route that renders only those elements) when given, else from the page itself.
 * `execution` limits execution events to one execution.
 */
export interface Live {
  events: string;
  refresh: string[];
  execution?: string;
  source?: string;
}

/**
 * `canonical`: the page's own URL when it can also be the answer to a form post (e.g. the Run
 * editor's error, answered at …/run): the script shows that URL and re-reads live parts from it.
 */
export function Layout(props: { title: string; section?: Section; signedIn?: boolean; live?: Live[]; canonical?: string; children?: Child }) {
  return (
    <>
      {raw('<!doctype html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${props.title} · hcm-runner`}</title>
          <link rel="icon" href="/favicon.ico" />
          {props.canonical && <link rel="canonical" href={props.canonical} />}
          <link rel="stylesheet" href="/console/assets/console.css" />
          <script type="module" src="/console/assets/console.js"></script>
        </head>
        <body>
          {props.live?.map((l) => (
            <div
              hidden
              data-live-events={l.events}
              data-live-refresh={l.refresh.join(' ')}
              data-live-execution={l.execution}
              data-live-source={l.source}
            />
          ))}
          <header class="top">
            <a class="brand" href="/console/">
              hcm-runner
            </a>
            {props.signedIn !== false && (
              <>
                <nav aria-label="Console">
                  <NavLink href="/console/" current={props.section === 'integrations'}>
                    Integrations
                  </NavLink>
                  <NavLink href="/console/executions" current={props.section === 'executions'}>
                    Executions
                  </NavLink>
                  <NavLink href="/console/connections" current={props.section === 'connections'}>
                    Connections
                  </NavLink>
                </nav>
                <form method="post" action="/console/sign-out" class="sign-out">
                  <button type="submit">Sign out</button>
                </form>
              </>
            )}
          </header>
          <main id="main">{props.children}</main>
        </body>
      </html>
    </>
  );
}

function NavLink(props: { href: string; current: boolean; children: Child }) {
  return (
    <a href={props.href} aria-current={props.current ? 'page' : undefined}>
      {props.children}
    </a>
  );
}

export function Badge(props: { status: string; label?: string }) {
  return <span class={`badge badge-${props.status.replace(/[^a-z]/g, '')}`}>{props.label ?? props.status}</span>;
}

export function Time(props: { iso?: string | null }) {
  return props.iso ? <time datetime={props.iso}>{formatTime(props.iso)}</time> : <span class="muted">—</span>;
}

/** A message after an action (`?notice=`) or an error the page shows instead of failing. */
export function Notice(props: { notice?: string; error?: string }) {
  return (
    <>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
    </>
  );
}

/** An action that needs nothing but a click: a form that POSTs to `action`, with one button. */
export function PostButton(props: { action: string; primary?: boolean; label?: string; children: Child }) {
  return (
    <form method="post" action={props.action} class="inline">
      <button type="submit" class={props.primary ? 'primary' : undefined} aria-label={props.label}>
        {props.children}
      </button>
    </form>
  );
}

/** The executions table of the executions page and of an integration's page. */
export function ExecutionsTable(props: { id: string; label: string; executions: ExecutionSummary[]; showIntegration?: boolean }) {
  return (
    <div id={props.id} class="table-wrap">
      {props.executions.length === 0 ? (
        <p class="muted">No executions yet.</p>
      ) : (
        <table aria-label={props.label}>
          <thead>
            <tr>
              <th scope="col">Execution</th>
              {props.showIntegration && <th scope="col">Integration</th>}
              <th scope="col">Status</th>
              <th scope="col">Mode</th>
              <th scope="col">Attempt</th>
              <th scope="col">Queued</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {props.executions.map((e) => (
              <tr data-execution-id={e.id}>
                <td>
                  <a href={`/console/executions/${encodeURIComponent(e.id)}`} class="mono id">
                    {e.id}
                  </a>
                  {e.correlationKey !== undefined && <span class="muted key">{e.correlationKey}</span>}
                  {e.retryOf && (
                    <span class="muted key">
                      retry of <a href={`/console/executions/${encodeURIComponent(e.retryOf)}`}>{shortId(e.retryOf)}</a>
                    </span>
                  )}
                </td>
                {props.showIntegration && (
                  <td>
                    <a href={`/console/integrations/${encodeURIComponent(e.integration)}`}>{e.integration}</a>
                  </td>
                )}
                <td>
                  <Badge status={e.status} />
                  {e.status === 'waiting' && e.wakeAt && (
                    <span class="muted key">
                      wakes <Time iso={e.wakeAt} />
                    </span>
                  )}
                </td>
                <td>{e.test ? 'test' : 'live'}</td>
                <td>{e.attempt}</td>
                <td>
                  <Time iso={e.queuedAt ?? e.startedAt} />
                </td>
                <td>{formatDuration(e.durationMs)}</td>
                <td class="wrap">{e.error?.message ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
