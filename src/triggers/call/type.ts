/**
 * The call trigger type (src/triggers/type.ts): `$trigger` is `{input}`, the `input` of the
 * calling core.call step (or the payload of a manual run). Nothing runs between calls, so it has
 * no `start`; the hosts that run core.call use `callable` (below) and `children.ts`.
 */
import type { CompiledIntegration, CompiledTrigger } from '../../definition/types.js';
import type { TriggerTesting, TriggerType } from '../type.js';
import { callSpec } from './spec.js';

type Call = Extract<CompiledTrigger, { type: 'call' }>;

const testing: TriggerTesting<Call> = {
  caseTrigger: (_i, _t, input) => ({ input: input.input }),
  recordedInput: (_t, d) => ({ input: d.input }),
};

export const callTrigger: TriggerType<Call> = {
  spec: callSpec,
  evaluates: () => ({ values: [], steps: [] }),
  manualTrigger: (_t, payload) => ({ input: payload }),
  summary: (t) => (t.description ? { description: t.description } : {}),
  console: {
    runHelp: 'Runs the sub-flow now as a test execution; the JSON payload is its input ($trigger.input).',
    labels: { description: 'Description' },
  },
  caseKeys: () => ({ keys: ['input'], what: 'a call trigger' }),
  testing: async () => testing,
};

/** Whether core.call may run it: its trigger is `type: call`. */
export function isCallable(integration: CompiledIntegration): boolean {
  return integration.trigger.type === callSpec.type;
}
