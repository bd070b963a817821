/**
 * Kept for the importers outside src/store until they name the modules below (nothing in
 * src/store imports this file): list limits (list-limits.ts), statuses (statuses.ts) and an
 * execution's queued and running records (execution-states.ts).
 */
export { queuedRecord, runningRecord } from './execution-states.js';
export { MAX_LIST_LIMIT } from './list-limits.js';
export { STATUSES } from './statuses.js';
