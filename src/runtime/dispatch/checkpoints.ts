/**
 * Checkpoints of a running execution (docs/promises.md "Resume, not restart"): the engine calls
 * its `checkpoint` hook after each step that may have changed something outside the execution,
 * and the whole record is saved over the execution's row (the store group-commits saves).
 *
 * At most one save per execution is in flight. A checkpoint asked for while one is in flight does
 * not start a second save racing the first (their order at the database is not guaranteed on
 * PostgreSQL, and an older record must never land last): it waits for it, and every checkpoint
 * asked for meanwhile shares the one save that follows — of the record as it stands by then,
 * which holds what each of them wanted saved (the engine's record is one object it keeps updating).
 */
import type { ExecutionRecord } from '../../engine/record.js';
import type { LiveRun } from './live-runs.js';

/** Saves `record` (the run's latest) now, or once after the save in flight; resolves when a save that holds it committed. */
export function coalescedSave(entry: LiveRun, save: (record: ExecutionRecord) => Promise<void>): Promise<void> {
  if (!entry.inFlight) return startSave(entry, save);
  if (!entry.next) {
    const after = () => {
      entry.next = undefined;
      return startSave(entry, save);
    };
    // The next save runs whether the one in flight committed or failed.
    entry.next = entry.inFlight.then(after, after);
  }
  return entry.next;
}

function startSave(entry: LiveRun, save: (record: ExecutionRecord) => Promise<void>): Promise<void> {
  const saving = save(entry.record).finally(() => {
    if (entry.inFlight === saving) entry.inFlight = undefined;
  });
  entry.inFlight = saving;
  return saving;
}

/** Waits until no save of the run is in flight or queued (before its final save, which must land last). */
export async function savesSettled(entry: LiveRun | undefined): Promise<void> {
  while (entry && (entry.inFlight || entry.next)) await (entry.next ?? entry.inFlight)!.catch(() => undefined);
}
