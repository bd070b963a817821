/**
 * Every `hcm-runner` command: its name, its line in the usage text (in this order) and how to load
 * it. Each command's module is imported only when that command runs, so `validate` loads no
 * runtime. main.ts dispatches over this table and imports nothing else of the CLI.
 */

/** A command's entry point: its arguments in, the process exit code out. */
export type Command = (argv: string[]) => Promise<number>;

export interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
}

export const commands: Readonly<Record<string, CommandEntry>> = {
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
  serve: { summary: 'run the runtime: webhooks, schedules, polls, admin API', load: async () => (await import('./serve.js')).serveCommand },
  executions: {
    summary: 'list, show, replay, cancel or retry executions of a running server',
    load: async () => (await import('./executions.js')).executionsCommand,
  },
  listen: {
    summary: "print requests to an integration's test URL as they arrive (listening mode) until Ctrl-C",
    load: async () => (await import('./listen.js')).listenCommand,
  },
  payloads: { summary: 'list, save, edit and run saved payloads', load: async () => (await import('./payloads.js')).payloadsCommand },
  urls: { summary: "print integrations' webhook URLs", load: async () => (await import('./urls.js')).urlsCommand },
  test: {
    summary: 'run integration test files (*.test.yaml) with mocked steps (exit 0 passed, 1 failed, 2 usage/invalid)',
    load: async () => (await import('./test.js')).testCommand,
  },
};
