/**
 * `concurrency:` — the key an execution is lined up by (docs/authoring.md "Per-key concurrency"),
 * evaluated once, when the execution is created, like `correlationKey:`. It never refuses work: a
 * key whose expression fails or that is not a string is logged and the execution is recorded
 * without one (it runs outside any line). Long keys are kept as their sha256, like idempotency keys.
 */
import { createHash } from 'node:crypto';
import type { CompiledIntegration } from '../definition/types.js';
import { bareScope } from './connections.js';
import { evaluateTemplate } from './evaluate.js';

/** The one key of `concurrency: {limit}` without `key`: the whole integration is one line. */
export const WHOLE_INTEGRATION_KEY = '*';

/** Keys longer than this (UTF-8 bytes) are recorded as `sha256:<hex>` of the key (an indexed column). */
export const MAX_CONCURRENCY_KEY_BYTES = 512;

export function storedConcurrencyKey(key: string): string {
  return Buffer.byteLength(key, 'utf8') > MAX_CONCURRENCY_KEY_BYTES ? `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}` : key;
}

/**
 * The concurrency key of a new execution of `integration` with `trigger` as `$trigger`; undefined
 * when the file has no `concurrency:`, or when its key gives nothing usable (then a warning names
 * the integration, the execution and why).
 */
export async function concurrencyKeyOf(
  integration: CompiledIntegration,
  trigger: unknown,
  ctx: { executionId: string; env: NodeJS.ProcessEnv; logger?: { warn(obj: object, msg: string): void } },
): Promise<string | undefined> {
  const spec = integration.concurrency;
  if (!spec) return undefined;
  if (!spec.key) return WHOLE_INTEGRATION_KEY;
  let value: unknown;
  try {
    value = await evaluateTemplate(spec.key, { ...bareScope(ctx.env), trigger, execution: { id: ctx.executionId, integration: integration.name } });
  } catch (err) {
    return warn(integration, ctx, `its expression failed: ${(err as Error).message}`);
  }
  if (value === undefined || value === null || value === '') return warn(integration, ctx, 'it gave nothing');
  if (typeof value !== 'string')
    return warn(integration, ctx, `it gave ${Array.isArray(value) ? 'an array' : typeof value}, not a string (wrap it in $string(…))`);
  return storedConcurrencyKey(value);
}

function warn(
  integration: CompiledIntegration,
  ctx: { executionId: string; logger?: { warn(obj: object, msg: string): void } },
  why: string,
): undefined {
  ctx.logger?.warn(
    { integration: integration.name, executionId: ctx.executionId },
    `concurrency.key of ${integration.name}: ${why}; the execution runs without a key (not lined up with others)`,
  );
  return undefined;
}
