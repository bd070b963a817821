/**
 * The timing keys schedule and poll triggers share (every, cron, at, timezone): their spec and
 * their compile step — one form of the three, a known IANA zone, a cron that parses.
 * Spec-only: imports nothing that runs (see definition/spec.ts).
 */
import { Cron } from 'croner';
import { parseDuration } from '../../common/duration.js';
import type { Options, TriggerCompileContext } from '../../definition/spec.js';
import { stringValue } from '../../definition/spec.js';
import { closest } from '../../definition/suggest.js';
import type { ScheduleTiming } from '../../definition/types.js';

export const timingOptions: Options = {
  every: { schema: { $ref: '#/$defs/duration' }, description: 'Run every N seconds, minutes, hours or days (Ns, Nm, Nh, Nd).' },
  cron: { schema: { type: 'string' }, description: 'Cron expression, 5 fields (6 with seconds).' },
  at: { schema: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }, description: 'Every day at HH:MM.' },
  timezone: { schema: { type: 'string' }, default: 'UTC', description: 'IANA time zone for cron and at.' },
};

export function compileTiming(raw: Record<string, unknown>, ctx: TriggerCompileContext): ScheduleTiming {
  const forms = (['every', 'cron', 'at'] as const).filter((k) => raw[k] !== undefined);
  if (forms.length === 0) {
    ctx.problem('/trigger', `a ${String(raw.type)} trigger needs one of every (e.g. 15m), cron (e.g. "*/5 * * * *") or at (e.g. "08:30")`);
  } else if (forms.length > 1) {
    ctx.problem(`/trigger/${forms[1]}`, `use only one of every, cron and at (found ${forms.join(' and ')})`, 'key');
  }
  const timezone = stringValue(raw, timingOptions, 'timezone');
  if (!isValidTimeZone(timezone)) {
    const hint = closest(timezone, Intl.supportedValuesOf('timeZone'));
    ctx.problem(
      '/trigger/timezone',
      `unknown time zone "${timezone}"${hint ? ` — did you mean "${hint}"?` : ''}; use an IANA name such as Europe/Berlin or UTC`,
    );
  }
  const timing: ScheduleTiming = { timezone };
  if (typeof raw.every === 'string') {
    const ms = parseDuration(raw.every);
    // A malformed duration was reported by the schema; here only "0s" and the like remain.
    if (ms === undefined && /^\d+(ms|s|m|h|d)$/.test(raw.every))
      ctx.problem('/trigger/every', `"${raw.every}" is not a duration; write e.g. 30s, 15m, 2h or 1d (more than 0)`);
    else timing.every = ms;
  }
  if (typeof raw.at === 'string' && /^\d\d:\d\d$/.test(raw.at)) {
    const [h, m] = raw.at.split(':');
    timing.at = raw.at;
    timing.pattern = `0 ${Number(m)} ${Number(h)} * * *`;
  }
  if (typeof raw.cron === 'string') {
    timing.cron = raw.cron;
    const fields = raw.cron.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6) {
      ctx.problem('/trigger/cron', `cron "${raw.cron}" has ${fields} fields; write 5 (minute hour day month weekday) or 6 (with seconds first)`);
    } else {
      try {
        new Cron(raw.cron, { paused: true, timezone: isValidTimeZone(timezone) ? timezone : 'UTC' }).stop();
        timing.pattern = raw.cron;
      } catch (err) {
        ctx.problem('/trigger/cron', `cron "${raw.cron}" does not parse: ${(err as Error).message}`);
      }
    }
  }
  return timing;
}

const timeZoneValidity = new Map<string, boolean>();

/** Whether `tz` is an IANA zone Intl knows; cached because building a formatter is costly. */
export function isValidTimeZone(tz: string): boolean {
  let valid = timeZoneValidity.get(tz);
  if (valid === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      valid = true;
    } catch {
      valid = false;
    }
    timeZoneValidity.set(tz, valid);
  }
  return valid;
}
