/**
 * One log entry per change the registry applies (hot reload, POST /api/reload, SIGHUP), so the
 * log tells what now runs: a new or renamed webhook/appEvent integration names its live and test
 * URLs (the new name has a new token, hence new URLs); a file with problems says whether its last
 * good version keeps running — and, having been rejected, is never reported as loaded.
 */
import type { Logger } from 'pino';
import { acceptsWebhooks } from '../triggers/registry.js';
import type { RegistryChange } from './registry.js';

export interface ChangeLogContext {
  logger?: Logger;
  /** False during the first load: the start-up banner and "listening" entry cover it. */
  announce: boolean;
  /** The integration's webhook URLs, its token created first when needed. */
  webhookUrls(name: string): Promise<{ live: string; test: string } | undefined>;
}

export function logRegistryChange(c: RegistryChange, ctx: ChangeLogContext): void {
  const log = ctx.logger;
  if (!log) return;
  if (c.kind === 'error') {
    const problems = c.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`);
    log.error(
      { integration: c.name, file: c.file, problems },
      c.running ? `${c.file} has problems; last good version keeps running` : `${c.file} has problems; integration not loaded`,
    );
    return;
  }
  if (!ctx.announce) return;
  if (c.kind === 'removed') {
    log.info({ integration: c.name, file: c.file }, `integration ${c.name} removed (${c.file})`);
    return;
  }
  const renamedFrom = c.kind === 'updated' && c.previous && c.previous.name !== c.name ? c.previous.name : undefined;
  const message = renamedFrom
    ? `integration ${renamedFrom} renamed to ${c.name} (${c.file})`
    : `integration ${c.name} ${c.kind === 'added' ? 'added' : 'reloaded'} (${c.file})`;
  const fields = { integration: c.name, file: c.file, ...(renamedFrom ? { previousName: renamedFrom } : {}) };
  // URLs only where they are news: a new integration or a new name (an edit keeps its token).
  if (!acceptsWebhooks(c.current) || (c.kind === 'updated' && !renamedFrom)) {
    log.info(fields, message);
    return;
  }
  void ctx.webhookUrls(c.name).then(
    (urls) => log.info({ ...fields, ...(urls ? { live: urls.live, test: urls.test } : {}) }, message),
    (err: Error) => log.info({ ...fields, urlsError: err.message }, message),
  );
}
