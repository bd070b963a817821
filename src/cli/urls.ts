/** `hcm-runner urls [NAME]` — the webhook URLs of the running server's integrations. */
import { AdminClient, clientHelp, enc, runClient, serverFlag } from './admin-client.js';
import { parse, UsageError } from './args.js';

export const urlsUsage = `Usage: hcm-runner urls [NAME] [--json]

Prints the live and test webhook URLs of every webhook integration (or of NAME).
${clientHelp}`;

interface View {
  name: string;
  enabled: boolean;
  status: string;
  trigger: { type: string };
  webhookUrls?: { live: string; test: string };
}

export async function urlsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...serverFlag, json: { type: 'boolean' } }, urlsUsage);
  if (values.help) {
    process.stdout.write(`${urlsUsage}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`expected at most one integration NAME\n\n${urlsUsage}`);
  const client = new AdminClient(values.server as string | undefined, values.data as string | undefined);
  return runClient(async () => {
    const views = positionals[0]
      ? [await client.call<View>('GET', `/integrations/${enc(positionals[0])}`)]
      : await client.call<View[]>('GET', '/integrations');
    const withUrls = views.filter((v) => v.webhookUrls);
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify(
          withUrls.map((v) => ({ name: v.name, ...v.webhookUrls })),
          null,
          2,
        )}\n`,
      );
      return;
    }
    if (positionals[0] && withUrls.length === 0) {
      process.stderr.write(`${positionals[0]} has a ${views[0]!.trigger.type} trigger: no webhook URLs\n`);
      return;
    }
    for (const v of withUrls) {
      process.stdout.write(
        `${v.name}${v.enabled ? '' : ' (disabled: live URL answers 404)'}\n  live: ${v.webhookUrls!.live}\n  test: ${v.webhookUrls!.test}\n`,
      );
    }
  });
}
