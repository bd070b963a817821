/** The `hcm-runner` command line: dispatches to one module per command. */
import { resolveSetting, SettingError } from '../settings/resolve.js';
import { UsageError } from './args.js';

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  validate: {
    summary: 'check integration files (exit 0 valid, 1 problems, 2 usage)',
    load: async () => (await import('./validate.js')).validateCommand,
  },
  run: { summary: 'run one integration once, in-process, and print its execution record', load: async () => (await import('./run.js')).runCommand },
  connect: {
    summary: 'authorize an OAuth 2.0 connection (authorization-code flow)',
    load: async () => (await import('./connect.js')).connectCommand,
  },
  docs: { summary: 'regenerate the generated docs (docs/connectors/hcm.md)', load: async () => (await import('./docs.js')).docsCommand },
  sandbox: {
    summary: 'start the HCM sandbox (an HCM-compatible service for development and tests)',
    load: async () => (await import('../sandbox/cli.js')).sandboxCommand,
  },
};

export function registerCommand(name: string, summary: string, load: () => Promise<Command>): void {
  commands[name] = { summary, load };
}

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return `Usage: hcm-runner <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  .join('\n')}

Run 'hcm-runner <command> --help' for a command's options.`;
}

export async function main(argv: string[]): Promise<number> {
  await import('./commands.js');
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    process.stdout.write('hcm-runner 0.1.0\n');
    return 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`hcm-runner: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  try {
    return await (await command.load())(rest);
  } catch (err) {
    if (err instanceof UsageError || err instanceof SettingError) {
      process.stderr.write(`hcm-runner ${name}: ${err.message}\n`);
      return 2;
    }
    // The message is written for the person at the terminal; the stack only on request.
    const e = err as Error;
    process.stderr.write(
      `hcm-runner ${name}: ${resolveSetting('debug', { env: process.env }) ? (e.stack ?? String(err)) : (e.message ?? String(err))}\n`,
    );
    return 1;
  }
}
