/**
 * `correlationKey:` — the business key an execution is found by (`GET /api/executions?correlation=`),
 * evaluated once, when the execution is created. It never refuses work: a key whose expression
 * fails, that is not a string or that is too long is logged and the execution is recorded without
 * one (docs/authoring.md "Correlation keys").
 */
import type { CompiledIntegration } from '../definition/types.js';
import { bareScope } from './connections.js';
import { evaluateTemplate } from './evaluate.js';

/** Longest key kept: it is an indexed column, not a place for payloads. */
export const MAX_CORRELATION_KEY_LENGTH = 256;

export interface CorrelationLogger {
  warn(obj: object, msg: string): void;
}

/**
 * The key of a new execution of `integration` with `trigger` as `$trigger`; undefined when the
 * file has none, or when it gives nothing usable (then a warning names the integration and why).
 */
export async function correlationKeyOf(
  integration: CompiledIntegration,
  trigger: unknown,
  ctx: { executionId: string; env: NodeJS.ProcessEnv; logger?: CorrelationLogger },
): Promise<string | undefined> {
  const template = integration.correlationKey;
  if (!template) return undefined;
  let value: unknown;
  try {
    value = await evaluateTemplate(template, {
      ...bareScope(ctx.env),
      trigger,
      execution: { id: ctx.executionId, integration: integration.name },
    });
  } catch (err) {
    warn(integration, ctx, `its expression failed: ${(err as Error).message}`);
    return undefined;
  }
  if (value === undefined || value === null || value === '') return undefined; // nothing to correlate by: not a problem
  if (typeof value !== 'string') {
    warn(integration, ctx, `it gave ${Array.isArray(value) ? 'an array' : typeof value}, not a string (wrap it in $string(…))`);
    return undefined;
  }
  if (value.length > MAX_CORRELATION_KEY_LENGTH) {
    warn(integration, ctx, `it is ${value.length} characters long; at most ${MAX_CORRELATION_KEY_LENGTH} are kept`);
    return undefined;
  }
  return value;
}

function warn(integration: CompiledIntegration, ctx: { executionId: string; logger?: CorrelationLogger }, why: string): void {
  ctx.logger?.warn(
    { integration: integration.name, executionId: ctx.executionId },
    `correlationKey of ${integration.name}: ${why}; the execution is recorded without one`,
  );
}
