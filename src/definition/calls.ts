/**
 * core.call across files: the called integration must be loaded and have a `call` trigger, and
 * calls must not form a cycle. A file cannot tell alone, so this runs over a loaded set (validate,
 * a full load of the folder, a reloaded file against the rest); each problem is the calling file's.
 */
import { isCallable } from '../triggers/call/type.js';
import { closest } from './suggest.js';
import type { CallSite, CompiledIntegration, Problem } from './types.js';

/** A loaded file as far as this check needs it (load.ts's LoadedFile). */
interface CheckedFile {
  file: string;
  integration?: CompiledIntegration;
  problems: Problem[];
}

/**
 * Adds the problems of `files` (and drops their integration, as any problem does) given every
 * integration that is loaded besides them. `unknown: false` leaves a call of an integration not
 * loaded to fail at run time (a file reloaded before the one it calls has arrived).
 */
export function checkCalls(files: CheckedFile[], others: readonly CompiledIntegration[] = [], opts: { unknown?: boolean } = {}): void {
  const byName = new Map<string, CompiledIntegration>();
  for (const i of others) byName.set(i.name, i);
  for (const f of files) if (f.integration) byName.set(f.integration.name, f.integration);
  for (const f of files) {
    const integration = f.integration;
    if (!integration?.calls) continue;
    for (const call of integration.calls) {
      const message = callProblem(integration, call, byName, opts.unknown ?? true);
      if (message) f.problems.push({ file: f.file, line: call.position.line, column: call.position.column, message, path: call.pointer });
    }
  }
  for (const f of files) if (f.problems.length) f.integration = undefined;
}

function callProblem(from: CompiledIntegration, call: CallSite, byName: Map<string, CompiledIntegration>, unknown: boolean): string | undefined {
  const target = byName.get(call.integration);
  if (!target) {
    if (!unknown) return undefined;
    const hint = closest(call.integration, [...byName.keys()]);
    return `core.call of unknown integration "${call.integration}"${hint ? ` — did you mean "${hint}"?` : ''}: no integration of that name is loaded (validate the whole folder, or add an integration with \`trigger: {type: call}\`)`;
  }
  if (!isCallable(target))
    return `core.call of "${call.integration}", whose trigger is ${target.trigger.type}: core.call runs only integrations whose trigger is \`type: call\``;
  const cycle = cycleThrough(from.name, call.integration, byName);
  if (cycle) return `calls form a cycle: ${cycle.join(' → ')}; a sub-flow may not call itself, directly or through others — break the cycle`;
  return undefined;
}

/** The path from `to` back to `from` through literal calls (`from → to → … → from`), if there is one. */
function cycleThrough(from: string, to: string, byName: Map<string, CompiledIntegration>): string[] | undefined {
  const seen = new Set<string>();
  const path: string[] = [];
  const walk = (name: string): boolean => {
    if (name === from) return true;
    if (seen.has(name)) return false;
    seen.add(name);
    path.push(name);
    for (const c of byName.get(name)?.calls ?? []) if (walk(c.integration)) return true;
    path.pop();
    return false;
  };
  return walk(to) ? [from, ...path, from] : undefined;
}
