/** `hcm-runner executions list|show|replay|cancel|retry` — against a running server's admin API. */
import { AdminClient, clientHelp, enc, printJson, runClient, serverFlag } from './admin-client.js';
import { intFlag, parse, UsageError } from './args.js';

export const executionsUsage = `Usage: hcm-runner executions list [--integration NAME] [--status S] [--correlation KEY] [--limit N] [--json]
       hcm-runner executions show ID
       hcm-runner executions replay ID
       hcm-runner executions cancel ID
       hcm-runner executions retry ID [--again]
       hcm-runner executions retry [--integration NAME] [--status failed|cancelled] [--since T] [--until T]

  list     newest first; S is queued, running, waiting, succeeded, failed or cancelled; KEY is a
           correlationKey value
  show     the full execution record as JSON
  replay   a new execution with the same trigger data, on the version loaded now; prints its id (and that version on stderr)
  cancel   a queued or waiting execution is cancelled at once, a running one at its next step
           boundary; prints what happened
  retry    a failed or cancelled execution runs again from its failed step (the steps before it
           are not run again), as a new execution on the version loaded now; prints its id. One
           already retried is refused (naming its retry) unless --again.
           With filters instead of an ID: every matching execution (default --status failed),
           queued at or after --since and before --until (ISO-8601 times); prints one new id a line.
           Matches already retried are skipped (counted on stderr), so running it twice retries nothing twice
${clientHelp}`;

interface Summary {
  id: string;
  integration: string;
  status: string;
  test: boolean;
  attempt: number;
  queuedAt?: string;
  durationMs?: number;
  error?: { message: string };
  correlationKey?: string;
  version?: { sha256: string; commit?: string };
  wakeAt?: string;
  retryOf?: string;
}

/** A version as a person compares it: the first 12 hex digits of the sha256, and of the commit. */
function shortVersion(v: { sha256: string; commit?: string }): string {
  return `${v.sha256.slice(0, 12)}${v.commit ? ` @ ${v.commit.slice(0, 12)}` : ''}`;
}

export async function executionsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      ...serverFlag,
      integration: { type: 'string' },
      status: { type: 'string' },
      correlation: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      since: { type: 'string' },
      until: { type: 'string' },
      again: { type: 'boolean' },
    },
    executionsUsage,
  );
  if (values.help) {
    process.stdout.write(`${executionsUsage}\n`);
    return 0;
  }
  const [sub, id, ...extra] = positionals;
  const client = new AdminClient(values.server as string | undefined, values.data as string | undefined);
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"\n\n${executionsUsage}`);
  if (values.again && (sub !== 'retry' || !id)) throw new UsageError(`--again goes with executions retry ID\n\n${executionsUsage}`);
  if ((values.since !== undefined || values.until !== undefined) && sub !== 'retry')
    throw new UsageError(`--since and --until go with executions retry\n\n${executionsUsage}`);
  switch (sub) {
    case 'list': {
      if (id) throw new UsageError(`unexpected argument "${id}"\n\n${executionsUsage}`);
      const q = new URLSearchParams();
      if (values.integration) q.set('integration', values.integration as string);
      if (values.status) q.set('status', values.status as string);
      if (values.correlation) q.set('correlation', values.correlation as string);
      q.set('limit', String(intFlag(values.limit as string | undefined, 'limit', 20)));
      return runClient(async () => {
        const rows = await client.call<Summary[]>('GET', `/executions?${q}`);
        if (values.json) return printJson(rows);
        for (const r of rows) {
          const extraInfo = [
            r.correlationKey !== undefined ? `key ${r.correlationKey}` : '',
            r.status === 'waiting' && r.wakeAt ? `wakes ${r.wakeAt}` : '',
            r.retryOf ? `retry of ${r.retryOf}` : '',
            r.test ? 'test' : '',
            r.attempt > 1 ? `attempt ${r.attempt}` : '',
            r.durationMs !== undefined ? `${Math.round(r.durationMs)}ms` : '',
          ]
            .filter(Boolean)
            .join(', ');
          process.stdout.write(
            `${r.id}  ${r.status.padEnd(9)}  ${r.integration}  ${r.queuedAt ?? ''}${extraInfo ? `  (${extraInfo})` : ''}${r.error ? `  ${r.error.message}` : ''}\n`,
          );
        }
        if (rows.length === 0) process.stderr.write('no executions\n');
      });
    }
    case 'show':
      if (!id) throw new UsageError(`executions show needs an execution ID\n\n${executionsUsage}`);
      return runClient(async () => printJson(await client.call('GET', `/executions/${enc(id)}`)));
    case 'replay':
      if (!id) throw new UsageError(`executions replay needs an execution ID\n\n${executionsUsage}`);
      return runClient(async () => {
        const r = await client.call<{ executionId: string; version?: { sha256: string; commit?: string } }>('POST', `/executions/${enc(id)}/replay`);
        // The id alone on stdout (scripts capture it); the version it runs on for the person, on stderr.
        process.stdout.write(`${r.executionId}\n`);
        if (r.version) process.stderr.write(`runs on version ${shortVersion(r.version)}\n`);
      });
    case 'cancel':
      if (!id) throw new UsageError(`executions cancel needs an execution ID\n\n${executionsUsage}`);
      return runClient(async () => {
        const r = await client.call<{ id: string; status: string; cancelRequested?: boolean }>('POST', `/executions/${enc(id)}/cancel`);
        process.stdout.write(
          r.status === 'cancelled' ? `${r.id}  cancelled\n` : `${r.id}  ${r.status}, cancel requested: it stops at its next step boundary\n`,
        );
      });
    case 'retry': {
      const filter = { integration: values.integration, status: values.status, since: values.since, until: values.until } as Record<string, unknown>;
      const filtered = Object.values(filter).some((v) => v !== undefined);
      if (id && filtered)
        throw new UsageError(
          `executions retry takes an execution ID or filters (--integration, --status, --since, --until), not both\n\n${executionsUsage}`,
        );
      if (!id && !filtered) throw new UsageError(`executions retry needs an execution ID, or filters such as --status failed\n\n${executionsUsage}`);
      if (id)
        return runClient(async () => {
          const r = await client.call<{ executionId: string; version?: { sha256: string; commit?: string } }>(
            'POST',
            `/executions/${enc(id)}/retry`,
            values.again ? { again: true } : undefined,
          );
          process.stdout.write(`${r.executionId}\n`);
          if (r.version) process.stderr.write(`retries ${id} from its failed step, on version ${shortVersion(r.version)}\n`);
        });
      return runClient(() => retryMatching(client, filter));
    }
    default:
      throw new UsageError(`${sub ? `unknown subcommand "${sub}"` : 'missing subcommand'}\n\n${executionsUsage}`);
  }
}

interface BulkRetry {
  executionIds: string[];
  more: boolean;
  until?: string;
  skipped?: Array<{ executionId: string; error: string }>;
  alreadyRetried?: Array<{ executionId: string; retriedAs: string }>;
}

/**
 * Retries every match, 1,000 per call: each call answers where the next one continues (`until`,
 * older each time, so the loop ends and nothing is retried twice). Ids go to stdout as they come.
 */
async function retryMatching(client: AdminClient, filter: Record<string, unknown>): Promise<void> {
  let total = 0;
  let already = 0;
  let body = filter;
  for (;;) {
    const r = await client.call<BulkRetry>('POST', '/executions/retry', body);
    for (const newId of r.executionIds) process.stdout.write(`${newId}\n`);
    for (const s of r.skipped ?? []) process.stderr.write(`skipped ${s.executionId}: ${s.error}\n`);
    total += r.executionIds.length;
    already += r.alreadyRetried?.length ?? 0;
    // `until` only moves back in time; a server answering otherwise would loop forever.
    if (!r.more || !r.until || (typeof body.until === 'string' && Date.parse(r.until) >= Date.parse(body.until))) break;
    body = { ...filter, until: r.until };
  }
  if (already > 0)
    process.stderr.write(
      `skipped ${already} already retried execution${already === 1 ? '' : 's'} (executions retry ID --again retries one once more)\n`,
    );
  process.stderr.write(
    total === 0
      ? already === 0
        ? 'no execution matches: nothing retried\n'
        : 'nothing retried\n'
      : `retried ${total} execution${total === 1 ? '' : 's'}\n`,
  );
}
