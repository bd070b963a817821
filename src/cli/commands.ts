/** Commands beyond validate and run, registered here so main.ts stays a small dispatcher. */
import { registerCommand } from './main.js';

registerCommand('serve', 'run the runtime: webhooks, schedules, polls, admin API', async () => (await import('./serve.js')).serveCommand);
registerCommand('executions', 'list, show or replay executions of a running server', async () => (await import('./executions.js')).executionsCommand);
registerCommand(
  'listen',
  "print requests to an integration's test URL as they arrive (listening mode) until Ctrl-C",
  async () => (await import('./listen.js')).listenCommand,
);
registerCommand('payloads', 'list, save, edit and run saved payloads', async () => (await import('./payloads.js')).payloadsCommand);
registerCommand('urls', "print integrations' webhook URLs", async () => (await import('./urls.js')).urlsCommand);
registerCommand(
  'test',
  'run integration test files (*.test.yaml) with mocked steps (exit 0 passed, 1 failed, 2 usage/invalid)',
  async () => (await import('./test.js')).testCommand,
);
