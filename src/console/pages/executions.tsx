/** Executions, newest first, filterable by integration and status; kept live by the page script. */
import type { ExecutionSummary } from '../../store/types.js';
import { ExecutionsTable, Layout, Notice } from './layout.js';

export function ExecutionsPage(props: { executions: ExecutionSummary[]; integrations: string[]; statuses: string[]; integration?: string; status?: string; error?: string }) {
  const events = `/console/events${props.integration ? `?integration=${encodeURIComponent(props.integration)}` : ''}`;
  return (
    <Layout title="Executions" section="executions" live={[{ events, refresh: ['executions'] }]}>
      <h1>Executions</h1>
      <Notice error={props.error} />
      <form method="get" action="/console/executions" class="filters">
        <label for="filter-integration">Integration</label>
        <select id="filter-integration" name="integration">
          <option value="">all</option>
          {props.integrations.map((n) => (
            <option value={n} selected={n === props.integration}>
              {n}
            </option>
          ))}
        </select>
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">all</option>
          {props.statuses.map((s) => (
            <option value={s} selected={s === props.status}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit">Filter</button>
      </form>
      <ExecutionsTable id="executions" label="Executions" executions={props.executions} showIntegration />
    </Layout>
  );
}
