/** The `hcm-runner` command line: dispatches to one module per command (the table in commands.ts). */
import { resolveSetting, SettingError } from '../settings/resolve.js';
import { UsageError } from './args.js';
import { commands } from './commands.js';

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
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    process.stdout.write('hcm-runner 0.1.0\n');
    return 0;
  }
  // Own keys only: `hcm-runner constructor` (or `toString`) is an unknown command, not Object's.
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
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
