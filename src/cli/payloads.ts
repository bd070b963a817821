/** `hcm-runner payloads list|save|run|edit` — saved payloads (the Test tab's re-runnable requests). */
import { readFileSync } from 'node:fs';
import { payloadNameProblem } from '../common/payload-name.js';
import { AdminClient, clientHelp, enc, printJson, runClient, serverFlag } from './admin-client.js';
import { parse, UsageError } from './args.js';

export const payloadsUsage = `Usage: hcm-runner payloads list NAME
       hcm-runner payloads save NAME PAYLOAD --capture ID
       hcm-runner payloads run NAME PAYLOAD
       hcm-runner payloads edit NAME PAYLOAD --file JSON_FILE

  list   the saved payloads of integration NAME
  save   saves a captured request (see hcm-runner listen; GET …/captures) as PAYLOAD
  run    runs NAME with the saved PAYLOAD (a test execution); prints the execution id
  edit   replaces PAYLOAD's trigger data with JSON_FILE: either {"trigger": {...}} (the whole
         $trigger), {"payload": ...} (a JSON body), or a bare $trigger object
${clientHelp}`;

export async function payloadsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...serverFlag, capture: { type: 'string' }, file: { type: 'string' } }, payloadsUsage);
  if (values.help) {
    process.stdout.write(`${payloadsUsage}\n`);
    return 0;
  }
  const [sub, name, payload, ...extra] = positionals;
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"\n\n${payloadsUsage}`);
  if (!sub) throw new UsageError(`missing subcommand\n\n${payloadsUsage}`);
  if (!name) throw new UsageError(`payloads ${sub} needs an integration NAME\n\n${payloadsUsage}`);
  const client = new AdminClient(values.server as string | undefined, values.data as string | undefined);
  const base = `/integrations/${enc(name)}/payloads`;
  const needPayload = () => {
    if (!payload) throw new UsageError(`payloads ${sub} needs a PAYLOAD name\n\n${payloadsUsage}`);
    return enc(payload);
  };
  switch (sub) {
    case 'list':
      return runClient(async () => {
        const rows = await client.call<Array<{ name: string; updatedAt: string }>>('GET', base);
        for (const r of rows) process.stdout.write(`${r.name}  (updated ${r.updatedAt})\n`);
        if (rows.length === 0) process.stderr.write(`no saved payloads for ${name}\n`);
      });
    case 'save': {
      needPayload();
      // The server checks the same rule; saying it here needs no server round trip.
      const problem = payloadNameProblem(payload);
      if (problem) throw new UsageError(problem);
      if (!values.capture)
        throw new UsageError(`payloads save needs --capture ID (hcm-runner listen ${name}, then send a request to the test URL)\n\n${payloadsUsage}`);
      return runClient(async () => printJson(await client.call('POST', base, { name: payload, captureId: values.capture })));
    }
    case 'run': {
      const p = needPayload();
      return runClient(async () => {
        const r = await client.call<{ executionId: string }>('POST', `${base}/${p}/run`);
        process.stdout.write(`${r.executionId}\n`);
      });
    }
    case 'edit': {
      const p = needPayload();
      if (!values.file) throw new UsageError(`payloads edit needs --file JSON_FILE\n\n${payloadsUsage}`);
      let body: unknown;
      try {
        body = JSON.parse(readFileSync(values.file as string, 'utf8'));
      } catch (err) {
        throw new UsageError(`--file ${values.file}: ${(err as Error).message}`);
      }
      return runClient(async () => printJson(await client.call('PUT', `${base}/${p}`, body)));
    }
    default:
      throw new UsageError(`unknown subcommand "${sub}"\n\n${payloadsUsage}`);
  }
}
