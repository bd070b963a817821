/**
 * Tick computation: `every` aligned to the epoch, 5- and 6-field cron, `at`, time zones, and the
 * exact UTC instants around the 2026 daylight-saving transitions in Europe/Berlin
 * (2026-03-29 02:00 CET → 03:00 CEST, 2026-10-25 03:00 CEST → 02:00 CET).
 */
import { describe, expect, it } from 'vitest';
import type { ScheduleTiming } from '../../src/definition/types.js';
import { latestRunAtOrBefore, nextRunAfter, nextRuns } from '../../src/triggers/schedule/timing.js';

const iso = (dates: Array<Date | undefined>) => dates.map((d) => d?.toISOString());
const at = (hhmm: string, timezone = 'UTC'): ScheduleTiming => {
  const [h, m] = hhmm.split(':');
  return { at: hhmm, timezone, pattern: `0 ${Number(m)} ${Number(h)} * * *` };
};
const cron = (pattern: string, timezone = 'UTC'): ScheduleTiming => ({ cron: pattern, pattern, timezone });

describe('schedule timing', () => {
  it('every: multiples of the interval since the epoch, whatever the start', () => {
    const every = { every: 15 * 60_000, timezone: 'UTC' };
    expect(iso(nextRuns(every, new Date('2026-05-01T10:07:13Z'), 3))).toEqual([
      '2026-05-01T10:15:00.000Z',
      '2026-05-01T10:30:00.000Z',
      '2026-05-01T10:45:00.000Z',
    ]);
    // Exactly on a tick: the next one (strictly after).
    expect(nextRunAfter(every, new Date('2026-05-01T10:15:00Z'))?.toISOString()).toBe('2026-05-01T10:30:00.000Z');
    expect(nextRunAfter({ every: 86_400_000, timezone: 'Europe/Berlin' }, new Date('2026-05-01T10:00:00Z'))?.toISOString()).toBe(
      '2026-05-02T00:00:00.000Z',
    );
  });

  it('cron with 5 fields and with seconds', () => {
    expect(iso(nextRuns(cron('*/5 8-16 * * 1-5'), new Date('2026-05-01T16:57:00Z'), 2))).toEqual([
      '2026-05-04T08:00:00.000Z',
      '2026-05-04T08:05:00.000Z',
    ]);
    expect(iso(nextRuns(cron('*/20 * * * * *'), new Date('2026-05-01T10:00:05.250Z'), 3))).toEqual([
      '2026-05-01T10:00:20.000Z',
      '2026-05-01T10:00:40.000Z',
      '2026-05-01T10:01:00.000Z',
    ]);
  });

  it('at: every day at that local time', () => {
    expect(iso(nextRuns(at('08:30', 'Europe/Berlin'), new Date('2026-01-10T12:00:00Z'), 2))).toEqual([
      '2026-01-11T07:30:00.000Z',
      '2026-01-12T07:30:00.000Z',
    ]);
    expect(iso(nextRuns(at('08:30', 'America/New_York'), new Date('2026-07-10T12:00:00Z'), 1))).toEqual(['2026-07-10T12:30:00.000Z']);
  });

  it('spring forward (Berlin 2026-03-29): a time in the skipped hour runs once, at the instant it has in winter time', () => {
    // 02:30 does not exist that day; it runs at 01:30Z = 03:30 CEST, then 02:30 CEST = 00:30Z.
    expect(iso(nextRuns(at('02:30', 'Europe/Berlin'), new Date('2026-03-27T12:00:00Z'), 3))).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    // A (re)start after the jump but before that instant still sees it (croner alone would skip it).
    expect(nextRunAfter(at('02:30', 'Europe/Berlin'), new Date('2026-03-29T01:10:00Z'))?.toISOString()).toBe('2026-03-29T01:30:00.000Z');
    // A 30-minute cron simply goes on: 01:30 CET, then 03:00 CEST.
    expect(iso(nextRuns(cron('*/30 * * * *', 'Europe/Berlin'), new Date('2026-03-29T00:10:00Z'), 4))).toEqual([
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-29T02:00:00.000Z',
    ]);
  });

  it('fall back (Berlin 2026-10-25): the repeated hour runs once, in its second (winter-time) pass', () => {
    const halfHourly = cron('*/30 * * * *', 'Europe/Berlin');
    // 01:30 CEST (23:30Z), then nothing at 02:00/02:30 CEST (00:00Z, 00:30Z), then 02:00 CET (01:00Z) …
    expect(iso(nextRuns(halfHourly, new Date('2026-10-24T23:10:00Z'), 5))).toEqual([
      '2026-10-24T23:30:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T02:00:00.000Z',
      '2026-10-25T02:30:00.000Z',
    ]);
    // A (re)start inside the first pass sees the same ticks as a process that ran through it.
    for (const start of ['2026-10-25T00:00:00Z', '2026-10-25T00:10:00Z', '2026-10-25T00:40:00Z']) {
      expect(nextRunAfter(halfHourly, new Date(start))?.toISOString(), start).toBe('2026-10-25T01:00:00.000Z');
    }
    // at 02:30: once, at 02:30 CET.
    expect(iso(nextRuns(at('02:30', 'Europe/Berlin'), new Date('2026-10-24T12:00:00Z'), 2))).toEqual([
      '2026-10-25T01:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
    expect(nextRunAfter(at('02:30', 'Europe/Berlin'), new Date('2026-10-25T00:40:00Z'))?.toISOString()).toBe('2026-10-25T01:30:00.000Z');
  });

  it('latest tick at or before an instant (catch-up)', () => {
    expect(latestRunAtOrBefore({ every: 60_000, timezone: 'UTC' }, new Date('2026-05-01T10:05:30Z'))?.toISOString()).toBe('2026-05-01T10:05:00.000Z');
    expect(
      latestRunAtOrBefore({ every: 60_000, timezone: 'UTC' }, new Date('2026-05-01T10:05:30Z'), new Date('2026-05-01T10:05:00Z')),
    ).toBeUndefined();
    expect(latestRunAtOrBefore(at('08:30', 'Europe/Berlin'), new Date('2026-05-03T05:00:00Z'), new Date('2026-04-01T00:00:00Z'))?.toISOString()).toBe(
      '2026-05-02T06:30:00.000Z',
    );
    expect(latestRunAtOrBefore(cron('0 0 1 1 *'), new Date('2026-05-03T05:00:00Z'))?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });
});
