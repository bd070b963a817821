/** The execution statuses a store knows: filters are checked against them, counts hold each. */
import type { ExecutionStatus } from '../engine/record.js';
import type { ExecutionFilter } from './types.js';

export const STATUSES: readonly ExecutionStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];

export function emptyCounts(): Record<ExecutionStatus, number> {
  return { queued: 0, running: 0, waiting: 0, succeeded: 0, failed: 0, cancelled: 0 };
}

export function checkFilter(filter: ExecutionFilter): void {
  if (filter.status && !STATUSES.includes(filter.status)) throw new Error(`unknown execution status: ${filter.status}`);
}
