/**
 * The call trigger's spec: an integration run only by another's `core.call` (a reusable sub-flow)
 * or by hand. It has no keys but `description`. Spec-only: imports nothing that runs.
 */
import type { CompiledTrigger } from '../../definition/types.js';
import type { TriggerSpec } from '../../definition/spec.js';

type Call = Extract<CompiledTrigger, { type: 'call' }>;

export const callSpec: TriggerSpec<Call> = {
  type: 'call',
  description: 'Runs only when another integration calls it with core.call (a sub-flow), with $trigger.input; never triggered otherwise.',
  docs: 'docs/authoring.md#8-control-flow',
  options: {
    description: { schema: { type: 'string' }, description: 'What the sub-flow does and what its input holds.' },
  },
  compile: (raw) => ({ type: 'call', ...(typeof raw.description === 'string' ? { description: raw.description } : {}) }),
};
