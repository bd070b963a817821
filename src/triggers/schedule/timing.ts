/**
 * When a schedule (or poll) fires: pure functions over the compiled timing, shared by the loop,
 * catch-up and `nextRunAt`.
 *
 * - `every`: multiples of the interval since the Unix epoch (UTC), so every replica computes the
 *   same ticks (`every: 15m` fires at :00, :15, :30, :45; `1d` at 00:00 UTC). The time zone does not
 *   apply; use `at` or `cron` for local times of day.
 * - `cron` / `at`: croner in the trigger's time zone. Around daylight-saving transitions the
 *   result is what croner yields when it walks from tick to tick (see docs/triggers.md); to make
 *   that independent of the moment the walk starts (a restart in the middle of a transition), a
 *   start inside a transition walks from just before it.
 */
import { Cron } from 'croner';
import type { ScheduleTiming } from '../../definition/types.js';

const HOUR = 3_600_000;
/** How far around an instant a UTC-offset change is looked for (changes are at most 2 h). */
const LEAD = 4 * HOUR;

const crons = new Map<string, Cron>();

function cronFor(pattern: string, timezone: string): Cron {
  const key = `${timezone}\u0000${pattern}`;
  let c = crons.get(key);
  if (!c) {
    c = new Cron(pattern, { timezone, paused: true });
    crons.set(key, c);
  }
  return c;
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset in minutes at an instant. */
function offsetAt(timezone: string, at: number): number {
  let f = offsetFormats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    offsetFormats.set(timezone, f);
  }
  const text = f.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d\d):(\d\d)/.exec(text);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

/** The UTC-offset change within LEAD of `t`: its instant and size (ms), if any. */
function transitionNear(timezone: string, t: number): { at: number; delta: number } | undefined {
  const before = offsetAt(timezone, t - LEAD);
  const after = offsetAt(timezone, t + LEAD);
  if (before === after) return undefined;
  let lo = t - LEAD;
  let hi = t + LEAD;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(timezone, mid) === before) lo = mid;
    else hi = mid;
  }
  return { at: hi, delta: Math.abs(after - before) * 60_000 };
}

/** The first tick strictly after `after` (undefined: the timing never fires again). */
export function nextRunAfter(timing: ScheduleTiming, after: Date | number): Date | undefined {
  const t = typeof after === 'number' ? after : after.getTime();
  if (timing.every) return new Date((Math.floor(t / timing.every) + 1) * timing.every);
  if (!timing.pattern) return undefined;
  const cron = cronFor(timing.pattern, timing.timezone);
  const plain = () => cron.nextRun(new Date(t)) ?? undefined;
  const change = transitionNear(timing.timezone, t);
  // Before the repeated (autumn) or skipped (spring) local hour starts, croner walks normally.
  const anchor = change ? change.at - change.delta - 1 : undefined;
  if (anchor === undefined || t < anchor) return plain();
  // Inside or just after it, croner's answer depends on where the walk starts: walk from just
  // before it, so a restart sees the same ticks as a process that ran through the change.
  // (Patterns dense enough to need more steps fire right at the change: croner's answer is right.)
  let cursor: Date | null = new Date(anchor);
  for (let i = 0; i < 1000 && cursor; i++) {
    cursor = cron.nextRun(cursor);
    if (cursor && cursor.getTime() > t) return cursor;
  }
  return plain();
}

/**
 * The tick after `tick`, where `tick` is itself a tick of this timing (the loop walks from tick to
 * tick; cheaper than `nextRunAfter` and, by construction, on the same walk).
 */
export function stepFrom(timing: ScheduleTiming, tick: Date): Date | undefined {
  if (timing.every) return new Date(tick.getTime() + timing.every);
  if (!timing.pattern) return undefined;
  return cronFor(timing.pattern, timing.timezone).nextRun(tick) ?? undefined;
}

/** The next `count` ticks after `after` (tests, docs). */
export function nextRuns(timing: ScheduleTiming, after: Date | number, count: number): Date[] {
  const out: Date[] = [];
  let cursor = nextRunAfter(timing, after);
  while (out.length < count && cursor) {
    out.push(cursor);
    cursor = stepFrom(timing, cursor);
  }
  return out;
}

/**
 * The latest tick at or before `at` and after `notBefore` (catch-up: the most recent tick missed
 * while the process was down). Undefined when there is none in that range.
 */
export function latestRunAtOrBefore(timing: ScheduleTiming, at: Date | number, notBefore?: Date | number): Date | undefined {
  const t = typeof at === 'number' ? at : at.getTime();
  const floor = notBefore === undefined ? -Infinity : new Date(notBefore).getTime();
  if (timing.every) {
    const tick = Math.floor(t / timing.every) * timing.every;
    return tick > floor ? new Date(tick) : undefined;
  }
  // Walk forward from windows of growing size before `at` until one holds a tick.
  for (const window of [60_000, HOUR, 26 * HOUR, 32 * 24 * HOUR, 367 * 24 * HOUR, 5 * 367 * 24 * HOUR]) {
    const from = Math.max(t - window, floor);
    let last: Date | undefined;
    let cursor = nextRunAfter(timing, from);
    for (let i = 0; i < 200_000 && cursor && cursor.getTime() <= t; i++) {
      last = cursor;
      cursor = stepFrom(timing, cursor);
    }
    if (last) return last;
    if (from === floor) return undefined;
  }
  return undefined;
}

/** "every 15m" / "cron 0 8 * * 1-5 (Europe/Berlin)" / "at 08:30 (UTC)" — for logs. */
export function describeTiming(timing: ScheduleTiming): string {
  if (timing.every) return `every ${timing.every} ms`;
  if (timing.at) return `at ${timing.at} (${timing.timezone})`;
  return `cron ${timing.cron} (${timing.timezone})`;
}
