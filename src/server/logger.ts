/**
 * pino JSON logs. Execution logs carry executionId + integration (child loggers in the
 * dispatcher). Request bodies, headers and secrets are never logged; the redact list is a second
 * line of defence should a caller pass such objects by mistake.
 */
import { pino, type Logger } from 'pino';

export function createLogger(level = process.env.HCM_RUNNER_LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service: 'hcm-runner' },
    redact: {
      paths: ['headers.authorization', 'req.headers.authorization', 'authorization', 'secret', 'clientSecret', 'accessToken', 'refreshToken', 'body', 'rawBody'],
      censor: '[redacted]',
    },
  });
}
