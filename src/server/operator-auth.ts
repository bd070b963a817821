/**
 * What guards the operator's surface (the admin API and the console): the admin token, the
 * throttle of failed attempts both share, the session lifetime and the cap on operator bodies.
 * Built once per app (src/server/app.ts) from the settings startServer reads
 * (docs/server.md "Settings"; docs/security.md "Operator authentication").
 */
import type { Logger } from 'pino';
import { DEFAULT_SESSION_SECONDS } from '../console/session.js';
import { AuthThrottle, DEFAULT_AUTH_MAX_FAILURES, DEFAULT_AUTH_MAX_LOCKOUT_SECONDS } from './auth-throttle.js';
import type { Metrics } from './metrics.js';
import { DEFAULT_ADMIN_BODY_LIMIT_BYTES } from './request-body.js';

export interface OperatorAuthSettings {
  /** Wrong tokens in a row from one client before it is locked out (HCM_RUNNER_AUTH_MAX_FAILURES). */
  maxFailures: number;
  /** The longest lockout, in seconds (HCM_RUNNER_AUTH_MAX_LOCKOUT_SECONDS). */
  maxLockoutSeconds: number;
  /** How long a console session lasts (HCM_RUNNER_CONSOLE_SESSION_SECONDS). */
  consoleSessionSeconds: number;
  /** Largest admin API JSON body and console form (HCM_RUNNER_MAX_ADMIN_BODY_BYTES). */
  maxAdminBodyBytes: number;
}

export const DEFAULT_OPERATOR_AUTH_SETTINGS: OperatorAuthSettings = {
  maxFailures: DEFAULT_AUTH_MAX_FAILURES,
  maxLockoutSeconds: DEFAULT_AUTH_MAX_LOCKOUT_SECONDS,
  consoleSessionSeconds: DEFAULT_SESSION_SECONDS,
  maxAdminBodyBytes: DEFAULT_ADMIN_BODY_LIMIT_BYTES,
};

export interface OperatorAuth extends OperatorAuthSettings {
  adminToken: string;
  throttle: AuthThrottle;
}

export function operatorAuth(adminToken: string, settings: OperatorAuthSettings, metrics: Metrics, logger?: Logger): OperatorAuth {
  const throttle = new AuthThrottle({
    maxFailures: settings.maxFailures,
    maxLockoutMs: settings.maxLockoutSeconds * 1000,
    logger,
    counter: metrics.authFailures,
  });
  return { ...settings, adminToken, throttle };
}
