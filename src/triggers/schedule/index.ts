/** The schedule trigger: tick computation (croner, time zones, DST), the tick loop, overlap, catch-up. */
export { ManualClock, systemClock, type Clock, type TimerHandle } from './clock.js';
export { describeTiming, latestRunAtOrBefore, nextRunAfter, nextRuns, stepFrom } from './timing.js';
export { Ticker } from './ticker.js';
export { ScheduleTrigger, SCHEDULE_STATE_KEY, type ScheduleState, type ScheduleTriggerData } from './schedule.js';
