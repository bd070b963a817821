import { describe, expect, it } from 'vitest';
import { newExecutionId } from '../../src/common/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix milliseconds in the first 48 bits. */
const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('execution IDs', () => {
  it('are UUIDs of version 7 carrying the time they were made', () => {
    const before = Date.now();
    const id = newExecutionId();
    expect(id).toMatch(V7);
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(Date.now());
  });

  it('increase as text, with no repeats, also within one millisecond and past 4,096 of them', () => {
    const ids = [newExecutionId()];
    const ms = msOf(ids[0]!) + 10;
    for (let i = 0; i < 10_000; i++) ids.push(newExecutionId(ms));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i]} after ${ids[i - 1]}`).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // The counter holds at most 4,096 per millisecond: the rest borrowed the milliseconds after.
    expect(msOf(ids.at(-1)!)).toBeGreaterThan(ms);
    for (const id of ids) expect(id).toMatch(V7);
  });

  it('keep increasing when the clock goes back', () => {
    const a = newExecutionId();
    const b = newExecutionId(msOf(a) - 60_000);
    expect(b > a).toBe(true);
  });

  it('differ in their random part', () => {
    const tails = new Set(Array.from({ length: 1000 }, () => newExecutionId().slice(19)));
    expect(tails.size).toBe(1000);
  });
});
