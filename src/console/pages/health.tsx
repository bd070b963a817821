/**
 * The console's trigger-health marks (schedules and polls, runtime/trigger-health.ts): a
 * **failing** or **stalled** badge with the last error, on the integrations page and the
 * integration's page. The API's `health` is the one source: nothing is decided here.
 */
import type { TriggerHealth } from '../../runtime/trigger-health.js';
import { Badge, Time } from './layout.js';

const WHY: Record<TriggerHealth['status'], string> = {
  ok: '',
  failing: 'its last runs failed',
  stalled: 'it has not run for three periods',
};

/** The badge and the last error, or nothing while the trigger is healthy. */
export function HealthMark(props: { health?: TriggerHealth }) {
  const h = props.health;
  if (!h || h.status === 'ok') return null;
  return (
    <span class="health">
      <Badge status={h.status} label={h.status} /> <span class="muted">{WHY[h.status]}</span>
      {h.lastError && <LastError error={h.lastError} />}
    </span>
  );
}

/** The Health facts of the integration's page. */
export function HealthFacts(props: { health: TriggerHealth }) {
  const h = props.health;
  return (
    <>
      <dt>Health</dt>
      <dd>{h.status === 'ok' ? <Badge status="ok" label="healthy" /> : <HealthMark health={h} />}</dd>
      <dt>Last run</dt>
      <dd>
        <Time iso={h.lastRunAt} />
      </dd>
      <dt>Last success</dt>
      <dd>
        <Time iso={h.lastSuccessAt} />
      </dd>
      <dt>Failures in a row</dt>
      <dd>{h.consecutiveFailures}</dd>
      {h.status === 'ok' && h.lastError && (
        <>
          <dt>Last error</dt>
          <dd>
            <LastError error={h.lastError} />
          </dd>
        </>
      )}
    </>
  );
}

function LastError(props: { error: NonNullable<TriggerHealth['lastError']> }) {
  const e = props.error;
  return (
    <span class="last-error wrap">
      <Time iso={e.at} />{' '}
      {e.executionId ? (
        <a href={`/console/executions/${encodeURIComponent(e.executionId)}`} class="plain">
          {e.message}
        </a>
      ) : (
        e.message
      )}
    </span>
  );
}
