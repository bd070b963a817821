/** `hcm-runner listen NAME [--off]` — listening mode: capture requests to the test URL. */
import { AdminClient, clientHelp, enc, runClient, serverFlag } from './admin-client.js';
import { parse, UsageError } from './args.js';

export const listenUsage = `Usage: hcm-runner listen NAME [--off]

Turns listening mode on (or off with --off): requests to the integration's test URL are captured
and can be saved as payloads (hcm-runner payloads save NAME PAYLOAD --capture ID).
${clientHelp}`;

export async function listenCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...serverFlag, off: { type: 'boolean' } }, listenUsage);
  if (values.help) {
    process.stdout.write(listenUsage + '\n');
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected exactly one integration NAME\n\n${listenUsage}`);
  const client = new AdminClient(values.server as string | undefined);
  const name = positionals[0]!;
  return runClient(async () => {
    const r = await client.call<{ listening: boolean; testUrl?: string }>(values.off ? 'DELETE' : 'POST', `/integrations/${enc(name)}/listen`);
    process.stdout.write(r.listening ? `listening: requests to ${r.testUrl ?? 'the test URL'} are captured\n` : 'listening mode off\n');
  });
}
