/**
 * What the schedule, poll and appEvent triggers need from the process that hosts them. The
 * runtime's TriggerManager (src/runtime/triggers.ts) implements it over the store and the
 * dispatcher; the triggers themselves know no HTTP server and no dispatcher internals.
 */
import type { Logger } from 'pino';
import type { RuntimeServices } from '../../connectors/types.js';
import type { NewExecution, Store } from '../../store/types.js';
import type { Clock } from './clock.js';

export interface TriggerHost {
  store: Store;
  clock: Clock;
  services: RuntimeServices;
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Records executions durably and queues them (throws BusyError past the backlog limit). */
  submit(executions: NewExecution[]): Promise<void>;
  /** Queues executions already recorded by another transaction (store.commitPoll). */
  adopt(executions: NewExecution[]): void;
  /** Throws BusyError when `count` more executions would be refused now. */
  checkCapacity(count: number): void;
}
