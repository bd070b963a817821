/** The start page: one row per integration with its status, problems, last execution and next run. */
import type { ExecutionSummary } from '../../store/types.js';
import type { IntegrationView } from '../../server/views.js';
import type { TriggerHealth } from '../../runtime/trigger-health.js';
import { HealthMark } from './health.js';
import { Badge, Layout, Notice, Time } from './layout.js';

export interface IntegrationRow {
  view: IntegrationView;
  last?: ExecutionSummary;
  /** Schedules and polls: their trigger health (failing / stalled marks). */
  health?: TriggerHealth;
}

export function IntegrationsPage(props: { rows: IntegrationRow[]; notice?: string }) {
  return (
    <Layout title="Integrations" section="integrations" live={[{ events: '/console/events', refresh: ['integrations'] }]}>
      <h1>Integrations</h1>
      <Notice notice={props.notice} />
      <IntegrationsTable rows={props.rows} />
    </Layout>
  );
}

function IntegrationsTable(props: { rows: IntegrationRow[] }) {
  if (props.rows.length === 0) {
    return (
      <p id="integrations" class="muted">
        No integrations in the folder yet. Add a <code>*.yaml</code> file; it is picked up at once.
      </p>
    );
  }
  return (
    <div id="integrations" class="table-wrap">
      <table aria-label="Integrations">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Trigger</th>
            <th scope="col">Enabled</th>
            <th scope="col">Status</th>
            <th scope="col">Last execution</th>
            <th scope="col">Next run</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ view, last, health }) => (
            <tr>
              <td>
                <a href={`/console/integrations/${encodeURIComponent(view.name)}`}>{view.name}</a>
              </td>
              <td>{view.trigger.type}</td>
              <td>{view.enabled ? 'yes' : 'no'}</td>
              <td class="wrap">
                <Badge status={view.status} />
                <HealthMark health={health} />
                {view.errors && <Problems errors={view.errors} />}
              </td>
              <td>
                {last ? (
                  <a href={`/console/executions/${encodeURIComponent(last.id)}`} class="plain">
                    <Badge status={last.status} /> <Time iso={last.finishedAt ?? last.startedAt ?? last.queuedAt} />
                  </a>
                ) : (
                  <span class="muted">none yet</span>
                )}
              </td>
              <td>{nextRun(view)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function nextRun(view: IntegrationView) {
  // Only triggers that run on a timer report `nextRunAt` (src/triggers/loops.ts).
  if (!('nextRunAt' in view)) return <span class="muted">—</span>;
  if (view.nextRunAt === null) return <span class="muted">{view.enabled ? 'not scheduled' : 'disabled'}</span>;
  return <Time iso={view.nextRunAt as string} />;
}

/** Each problem as `FILE:LINE:COL message`. */
export function Problems(props: { errors: NonNullable<IntegrationView['errors']> }) {
  return (
    <ul class="problems">
      {props.errors.map((p) => (
        <li>
          <code>{`${p.file}:${p.line}:${p.column}`}</code> {p.message}
        </li>
      ))}
    </ul>
  );
}
