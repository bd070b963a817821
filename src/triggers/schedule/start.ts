/** The schedule trigger at run time: one tick loop per enabled integration (loaded by `serve` only). */
import { IntegrationLoops } from '../loops.js';
import type { StartTrigger } from '../type.js';
import { ScheduleTrigger } from './schedule.js';

export const startSchedules: StartTrigger = (host) => new IntegrationLoops((i) => new ScheduleTrigger(i, host), host.logger);
