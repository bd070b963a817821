/**
 * Execution IDs: UUIDs of version 7 (RFC 9562), time-ordered. Still 36-character UUID strings,
 * but the text order of the IDs a process makes is the order it made them in, so every new
 * `executions` row lands at the right-hand end of the primary-key index instead of on a random
 * page of it: a commit dirties a few pages instead of one page per row, which makes the commit's
 * WAL write, its fsync and the checkpoints smaller on SQLite and the index writes on PostgreSQL
 * (bench/profiling.md, "Time-ordered IDs, leaner writes and calls, a larger young generation",
 * item 1). The 62 bits after the counter are random, so an ID cannot be guessed from another one.
 *
 * Layout: 48 bits of Unix milliseconds, version 7, a 12-bit counter (method 1 of RFC 9562 §6.2:
 * it starts at a random value below 2048 each millisecond and counts up within it; when it runs
 * out the timestamp moves on by one), variant 10, 62 random bits.
 */
import { randomFillSync } from 'node:crypto';

/** Bytes of randomness per ID: 2 for the counter's start, 8 for the variant field and the tail. */
const PER_ID = 10;
/** Random bytes drawn in blocks: one call to the CSPRNG per 400 IDs, not one per ID. */
const pool = Buffer.alloc(PER_ID * 400);
let poolAt = pool.length;

function randomBytesForId(): Buffer {
  if (poolAt + PER_ID > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const b = pool.subarray(poolAt, poolAt + PER_ID);
  poolAt += PER_ID;
  return b;
}

let lastMs = -1;
let counter = 0;
/** The first two groups (the timestamp) of `lastMs`, formatted once per millisecond. */
let timePrefix = '';
let prefixMs = -1;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
/** Two hex digits per byte value: formatting by table is several times faster than toString(16). */
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => hex(i, 2));

/** A new execution ID; each is greater (as text) than the one this process made before it. */
export function newExecutionId(now: number = Date.now()): string {
  const r = randomBytesForId();
  if (now > lastMs) {
    lastMs = now;
    counter = ((r[0]! << 8) | r[1]!) & 0x7ff;
  } else if (++counter > 0xfff) {
    // 4096 IDs in one millisecond, or the clock went back: borrow the next millisecond.
    lastMs++;
    counter = ((r[0]! << 8) | r[1]!) & 0x7ff;
  }
  if (prefixMs !== lastMs) {
    prefixMs = lastMs;
    // 48 bits do not fit JavaScript's 32-bit bit operators: the high 32 bits and the low 16.
    timePrefix = `${hex(Math.floor(lastMs / 0x10000), 8)}-${hex(lastMs % 0x10000, 4)}-`;
  }
  const h = BYTE_HEX;
  return (
    `${timePrefix}${h[0x70 | (counter >> 8)]}${h[counter & 0xff]}-${h[0x80 | (r[2]! & 0x3f)]}${h[r[3]!]}-` +
    `${h[r[4]!]}${h[r[5]!]}${h[r[6]!]}${h[r[7]!]}${h[r[8]!]}${h[r[9]!]}`
  );
}
