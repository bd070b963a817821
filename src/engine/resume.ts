/**
 * What a retry from the failed step resumes from (`POST /api/executions/{id}/retry`,
 * docs/server.md): the failed execution's step records up to its failed step. Steps finished
 * before it keep their records (not run again); the failed step, and everything after it, runs.
 * Inside a group the same holds one level down: the group is re-entered with its steps before the
 * failure, a forEach group with its iterations before the failed one.
 */
import type { StepRecord } from './record.js';

/** Finished for good: not run again when resuming. A step that failed with `onError: continue` is finished too. */
export function isFinished(step: StepRecord, continued: boolean): boolean {
  return step.status === 'succeeded' || step.status === 'skipped' || (step.status === 'failed' && continued);
}

/**
 * The step records a retry resumes from: the records before the first step that failed the
 * execution (and, for a group that failed, its inner records before the failure). `continued(id)`
 * says whether a failed step had `onError: continue` (its failure did not stop the execution).
 * Without it the record itself tells: nothing runs after a step that stopped its list, so a failed
 * step followed by another record in the same list was continued.
 */
export function stepsBeforeFailure(steps: readonly StepRecord[], continued: (stepId: string) => boolean = () => false): StepRecord[] {
  const out: StepRecord[] = [];
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (isFinished(step, step.status === 'failed' && (i < steps.length - 1 || continued(step.id)))) {
      out.push(step);
      continue;
    }
    // The step that stopped the execution (failed, waiting, running or cancelled at): keep what
    // finished inside it, drop the rest.
    const inner = innerBeforeFailure(step, continued);
    if (inner) out.push(inner);
    break;
  }
  return out;
}

/** A group's record cut before its failure, with status `running` (it runs again); undefined for a plain step. */
function innerBeforeFailure(step: StepRecord, continued: (stepId: string) => boolean): StepRecord | undefined {
  const { error: _e, finishedAt: _f, durationMs: _d, results: _r, ...rest } = step;
  if (step.steps) return { ...rest, status: 'running', steps: stepsBeforeFailure(step.steps, continued) };
  if (step.iterations) {
    const iterations = [];
    for (const it of step.iterations) {
      const kept = stepsBeforeFailure(it.steps, continued);
      // Every step of the iteration kept whole (none cut to its part before a failure).
      const whole = kept.length === it.steps.length && kept.every((s, k) => s === it.steps[k]);
      iterations.push({ index: it.index, steps: kept });
      if (!whole) break;
    }
    return { ...rest, status: 'running', iterations };
  }
  if (step.done) return { ...rest, status: 'running', done: step.done };
  return undefined;
}
