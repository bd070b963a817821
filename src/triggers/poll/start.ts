/** The poll trigger at run time: one poll loop per enabled integration, its last outcome shown as `lastPoll` (loaded by `serve` only). */
import { IntegrationLoops } from '../loops.js';
import type { StartTrigger } from '../type.js';
import { PollTrigger } from './poll.js';

export const startPolls: StartTrigger = (host) =>
  new IntegrationLoops(
    (i) => new PollTrigger(i, host),
    host.logger,
    (poll) => (poll.last ? { lastPoll: poll.last } : undefined),
  );
