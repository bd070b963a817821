/**
 * Runs core.call's child executions for a host that holds the loaded integrations (the runtime,
 * `hcm-runner run`, `hcm-runner test`): looks the called integration up, refuses one that is not
 * a `call` integration, gives the child its id before it runs (the parent's step record links it)
 * and `$trigger` = `{input}`. The host runs the engine and keeps the child's record its own way.
 */
import { ActionError } from '../../common/errors.js';
import { newExecutionId } from '../../common/ids.js';
import type { CompiledIntegration } from '../../definition/types.js';
import type { CallHost, CallRequest } from '../../engine/call.js';
import type { ExecutionRecord } from '../../engine/record.js';
import { isCallable } from './type.js';

/** What the host passes on to runExecution for a child. */
export interface ChildRun {
  executionId: string;
  trigger: { input: unknown };
  parent: CallRequest['parent'];
  depth: number;
  test: boolean;
  signal: AbortSignal;
  /** The same host, for the child's own calls. */
  call: CallHost;
}

export function callHost(
  lookup: (name: string) => CompiledIntegration | undefined,
  run: (integration: CompiledIntegration, child: ChildRun) => Promise<ExecutionRecord>,
): CallHost {
  const host: CallHost = async (req) => {
    const target = lookup(req.integration);
    if (!target) throw new ActionError(`no integration "${req.integration}" is loaded`, { code: 'not_found' });
    if (!isCallable(target))
      throw new ActionError(
        `"${req.integration}" has a ${target.trigger.type} trigger; core.call runs only integrations whose trigger is \`type: call\``,
        {
          code: 'invalid_input',
        },
      );
    const executionId = newExecutionId();
    req.started(executionId);
    return run(target, {
      executionId,
      trigger: { input: req.input },
      parent: req.parent,
      depth: req.depth,
      test: req.test,
      signal: req.signal,
      call: host,
    });
  };
  return host;
}
