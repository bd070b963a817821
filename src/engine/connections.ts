/**
 * Resolves an integration's named connection: its config with env and file values read now. An
 * optional input whose env variable is unset, or whose file does not exist, is simply absent — a
 * `refreshToken` is only needed until tokens are stored.
 */
import { findConnectionType } from '../connectors/catalog.js';
import type { ResolvedConnection } from '../connectors/types.js';
import type { CompiledIntegration } from '../definition/types.js';
import { evaluateTemplate, type Scope } from './evaluate.js';
import { FileValueError, readFileValue } from './file-value.js';

export async function resolveConnection(integration: CompiledIntegration, name: string, scope: Scope): Promise<ResolvedConnection> {
  const def = integration.connections[name];
  if (!def) throw new Error(`connection "${name}" is not defined`);
  try {
    if (def.config.kind !== 'object') {
      return { name, type: def.type, config: (await evaluateTemplate(def.config, scope)) as Record<string, unknown> };
    }
    const inputs = findConnectionType(def.type)?.inputs ?? {};
    const config: Record<string, unknown> = {};
    for (const [key, template] of def.config.entries) {
      const optional = (template.kind === 'env' || template.kind === 'file') && !template.hasDefault && !inputs[key]?.required;
      if (optional && template.kind === 'env' && scope.env[template.name] === undefined) continue;
      if (optional && template.kind === 'file') {
        const value = await readFileValue(template).catch((err: Error) => {
          if (err instanceof FileValueError && err.missing) return undefined;
          throw err;
        });
        if (value !== undefined) config[key] = value;
        continue;
      }
      config[key] = await evaluateTemplate(template, scope);
    }
    return { name, type: def.type, config };
  } catch (err) {
    throw new Error(`connection "${name}": ${(err as Error).message}`);
  }
}

/** A scope for evaluating outside an execution (connection configs, CLI commands). */
export function bareScope(env: NodeJS.ProcessEnv = process.env): Scope {
  return { trigger: {}, steps: {}, errors: {}, config: {}, execution: {}, state: {}, env };
}

/**
 * A connection resolved outside an execution (the OAuth authorize route, `hcm-runner connect`):
 * `$config` is evaluated first, as a run would, so `{% $config.tenant %}` in a connection gives
 * the same URLs — and the same token key — as when a step uses it.
 */
export async function resolveConnectionOutsideRun(
  integration: CompiledIntegration,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedConnection> {
  const scope = bareScope(env);
  try {
    scope.config = ((await evaluateTemplate(integration.config, scope)) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`config: ${(err as Error).message}`);
  }
  return resolveConnection(integration, name, scope);
}
