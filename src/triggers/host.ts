/**
 * What a trigger's run-time part needs from the process that hosts it. The runtime
 * (src/runtime/trigger-lifecycle.ts) implements it over the store, the dispatcher, the webhook
 * tokens and the registry; the triggers themselves know no HTTP server and no dispatcher internals.
 */
import type { Logger } from 'pino';
import type { RuntimeServices } from '../connectors/types.js';
import type { CompiledIntegration } from '../definition/types.js';
import type { NewExecution, Store } from '../store/types.js';
import type { Clock } from './schedule/clock.js';

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
  /** The integration's webhook URLs, its token created first when needed. */
  webhookUrls(name: string): Promise<{ live: string; test: string }>;
  /** Whether the integration is in listening mode (its test URL captures requests). */
  isListening(name: string): boolean;
  /** The integration's running version now (a retry re-reads it). */
  current(name: string): CompiledIntegration | undefined;
  /** Trigger health (src/runtime/trigger-health.ts): a tick or a poll ran, succeeded or failed. */
  reportRun?(name: string, outcome: TriggerRunOutcome): void;
}

/**
 * One run of a trigger that runs on its own clock, for its health: `started` when it started
 * executions (they succeed or fail for it), `succeeded`/`failed` when it ended by itself (a poll
 * that found nothing new, or that failed; a tick that could not start its execution).
 */
export interface TriggerRunOutcome {
  status: 'started' | 'succeeded' | 'failed';
  /** ISO time of the tick or poll. */
  at: string;
  error?: string;
  executionId?: string;
}
