/**
 * pino logs on stdout. Execution logs carry executionId + integration (child loggers in the
 * dispatcher). Request bodies, headers and secrets are never logged; the redact list is a second
 * line of defence should a caller pass such objects by mistake.
 *
 * Format: one JSON object per line for machines, or one readable line per entry for a person at a
 * terminal (`17:45:01.234 INFO  execution succeeded  integration=… status=succeeded`).
 * HCM_RUNNER_LOG_FORMAT=json|pretty chooses; by default it is pretty when stdout is a terminal.
 * Either way control characters from caller data are escaped (log-escape.ts).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { escapeJsonLine } from './log-escape.js';
import { prettyStream } from './pretty-log.js';

export type LogFormat = 'json' | 'pretty';

/** The format asked for (the HCM_RUNNER_LOG_FORMAT setting), else pretty on a terminal, JSON otherwise. */
export function logFormat(asked: LogFormat | undefined, out: { isTTY?: boolean } = process.stdout): LogFormat {
  return asked ?? (out.isTTY ? 'pretty' : 'json');
}

export function createLogger(level = 'info', format: LogFormat = logFormat(undefined)): Logger {
  const options = {
    level,
    base: { service: 'hcm-runner' },
    // pino escapes C0 in strings; DEL and C1 are escaped here, before any format sees the line.
    hooks: { streamWrite: escapeJsonLine },
    redact: {
      paths: [
        'headers.authorization',
        'req.headers.authorization',
        'authorization',
        'secret',
        'clientSecret',
        'accessToken',
        'refreshToken',
        'body',
        'rawBody',
      ],
      censor: '[redacted]',
    },
  };
  if (format === 'json') return pino(options);
  return pino(options, prettyStream(process.stdout) as DestinationStream);
}
