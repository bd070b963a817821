/**
 * core.wait's rules that its input schema cannot say, checked at load time where the file says
 * them literally (the engine checks the same at run time: engine/wait.ts): exactly one of
 * for/until/callback, `timeout` only with `callback`, and no `forEach` on the step itself.
 */
import type { ProblemSink } from './problems.js';
import { joinPointer } from './yaml-source.js';

type Obj = Record<string, unknown>;

export function checkWaitStep(raw: Obj, inputs: Obj, at: string, id: string, problems: ProblemSink): void {
  if (raw.forEach !== undefined)
    problems.add(
      joinPointer(at, 'forEach'),
      `step "${id}" (core.wait) cannot have forEach: put the wait in the steps of a forEach group, one wait per iteration`,
      undefined,
      'key',
    );
  const present = (['for', 'until', 'callback'] as const).filter((k) => inputs[k] !== undefined);
  // Expressions may compute nothing at run time (one of two given by an `if`-like choice): only literals count twice.
  const given = present.filter((k) => !(typeof inputs[k] === 'string' && (inputs[k] as string).includes('{%')));
  if (present.length === 0)
    problems.add(joinPointer(at, 'inputs'), `step "${id}" (core.wait) needs one of the inputs for, until or callback`, undefined, 'key');
  else if (given.length > 1)
    problems.add(
      joinPointer(at, 'inputs', given[1]!),
      `step "${id}" (core.wait) has ${given.join(' and ')}: give only one of the inputs for, until or callback`,
      undefined,
      'key',
    );
  if (inputs.timeout !== undefined && inputs.callback === undefined)
    problems.add(
      joinPointer(at, 'inputs', 'timeout'),
      `step "${id}" (core.wait): timeout goes with callback only (a time wait ends by itself)`,
      undefined,
      'key',
    );
}
