/**
 * A webhook request's idempotency key (`idempotencyKey` on webhook and appEvent triggers,
 * docs/triggers.md "Idempotency"): evaluated once the request is authenticated, against the same
 * `$trigger` its steps see. A bad key never refuses a request: a sender's retry of a refused
 * request would be refused again, so the request is accepted without deduplication and the
 * operator is told.
 */
import { createHash } from 'node:crypto';
import type { CompiledIntegration, ValueTemplate } from '../../definition/types.js';
import { evaluateTemplate, type Scope } from '../../engine/evaluate.js';

/** Set on the answer to a duplicate: the request was answered as an earlier one, nothing new runs. */
export const REPLAY_HEADER = 'x-idempotent-replay';

/** Keys longer than this (UTF-8 bytes) are stored as `sha256:<hex>` of the key. */
export const MAX_KEY_BYTES = 512;

/** The key as stored and recorded: itself, or its sha256 past `MAX_KEY_BYTES`. */
export function storedKey(key: string): string {
  return Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES ? `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}` : key;
}

interface KeyHost {
  readonly env: NodeJS.ProcessEnv;
  readonly logger?: { warn(obj: object, msg: string): void };
}

/**
 * The request's key, or undefined for no deduplication: the expression gave nothing or "", or it
 * failed or gave something other than a string (warned about).
 */
export async function idempotencyKeyOf(
  template: ValueTemplate,
  integration: CompiledIntegration,
  execution: { id: string; test: boolean; queuedAt: string; trigger: unknown },
  host: KeyHost,
): Promise<string | undefined> {
  const scope: Scope = {
    trigger: execution.trigger,
    steps: {},
    errors: {},
    config: {},
    execution: { id: execution.id, integration: integration.name, startedAt: execution.queuedAt, attempt: 1, test: execution.test },
    state: {},
    env: host.env,
  };
  let value: unknown;
  try {
    value = await evaluateTemplate(template, scope);
  } catch (err) {
    warn(host, integration, execution.id, `the idempotencyKey expression failed: ${(err as Error).message}`);
    return undefined;
  }
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') {
    warn(
      host,
      integration,
      execution.id,
      `the idempotencyKey expression gave ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}, not a string`,
    );
    return undefined;
  }
  return storedKey(value);
}

function warn(host: KeyHost, integration: CompiledIntegration, executionId: string, reason: string): void {
  host.logger?.warn(
    { integration: integration.name, executionId },
    `integration ${integration.name}: ${reason}; the request was accepted without deduplication`,
  );
}
