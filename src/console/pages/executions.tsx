/**
 * Executions, newest first, filterable by integration and status; kept live by the page script.
 * The bulk action retries the failed (or cancelled) ones of the current integration filter.
 */
import type { ExecutionSummary } from '../../store/types.js';
import { MAX_CORRELATION_KEY_LENGTH } from '../../engine/correlation-key.js';
import { BulkRetry } from './durable.js';
import { ExecutionsTable, Layout, Notice } from './layout.js';

export function ExecutionsPage(props: {
  executions: ExecutionSummary[];
  integrations: string[];
  statuses: readonly string[];
  integration?: string;
  status?: string;
  /** The search box: executions whose correlation key is exactly this. */
  correlation?: string;
  notice?: string;
  error?: string;
  /** After a bulk retry that left more: where the next press continues (and for which status). */
  retryUntil?: string;
  retryStatus?: string;
}) {
  const events = `/console/events${props.integration ? `?integration=${encodeURIComponent(props.integration)}` : ''}`;
  return (
    <Layout title="Executions" section="executions" live={[{ events, refresh: ['executions'] }]}>
      <h1>Executions</h1>
      <Notice notice={props.notice} error={props.error} />
      <form method="get" action="/console/executions" class="filters">
        <Filter name="integration" label="Integration" choices={props.integrations} chosen={props.integration} />
        <Filter name="status" label="Status" choices={props.statuses} chosen={props.status} />
        <label for="filter-correlation">Correlation key</label>
        <input
          type="search"
          id="filter-correlation"
          name="correlation"
          value={props.correlation ?? ''}
          maxlength={MAX_CORRELATION_KEY_LENGTH}
          placeholder="e.g. a worker ID"
        />
        <button type="submit">Filter</button>
      </form>
      <BulkRetry integration={props.integration} status={props.retryStatus ?? props.status} until={props.retryUntil} />
      <ExecutionsTable id="executions" label="Executions" executions={props.executions} showIntegration />
    </Layout>
  );
}

/** One filter: "all" (an empty value, so the query leaves it out) or one of `choices`. */
function Filter(props: { name: string; label: string; choices: readonly string[]; chosen?: string }) {
  return (
    <>
      <label for={`filter-${props.name}`}>{props.label}</label>
      <select id={`filter-${props.name}`} name={props.name}>
        <option value="">all</option>
        {props.choices.map((choice) => (
          <option value={choice} selected={choice === props.chosen}>
            {choice}
          </option>
        ))}
      </select>
    </>
  );
}
