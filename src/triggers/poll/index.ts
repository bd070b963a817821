/** The poll trigger: runs its action on a schedule and starts executions for new items. */
export { PollTrigger, POLL_STATE_KEY, type PollOutcome, type PollState } from './poll.js';
