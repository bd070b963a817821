/**
 * Bounds on one integration file, so that loading (at start, on reload, in `validate`) stays
 * short whatever a file holds: its size is checked before it is read, its step count before it is
 * compiled, and the values its aliases expand to while it is parsed. docs/authoring.md "File limits".
 */
import { positiveIntEnv } from '../common/env.js';

export interface FileLimits {
  /** Bytes of one file; a larger file is not read at all. */
  maxFileBytes: number;
  /** Steps of one list (`steps`, `trigger.subscribe`, `trigger.unsubscribe`). */
  maxSteps: number;
}

/**
 * Far above any real integration (the examples are 2 KB; 500 steps are about 50 KB), and small
 * enough that parsing the largest allowed file stays under about a second (YAML with many flow
 * collections parses at roughly 150 KB/s on the 2-core reference machine).
 */
export const DEFAULT_MAX_FILE_BYTES = 128 * 1024;
export const DEFAULT_MAX_STEPS = 500;
/**
 * Values a file may expand to through aliases (`*anchor`): an anchor of 20,000 items aliased 1,000
 * times is 20 million values from a 100 KB file. A file without aliases never comes close.
 */
export const MAX_EXPANDED_VALUES = 1_000_000;

/**
 * The limits in force: HCM_RUNNER_MAX_FILE_BYTES and HCM_RUNNER_MAX_STEPS override the defaults.
 * A value that is not a whole number of at least 1 is an error naming the variable (it used to be
 * ignored silently, leaving the default in force while the operator believed otherwise).
 */
export function fileLimits(env: NodeJS.ProcessEnv = process.env): FileLimits {
  return {
    maxFileBytes: positiveIntEnv(env, 'HCM_RUNNER_MAX_FILE_BYTES') ?? DEFAULT_MAX_FILE_BYTES,
    maxSteps: positiveIntEnv(env, 'HCM_RUNNER_MAX_STEPS') ?? DEFAULT_MAX_STEPS,
  };
}

/** `1048576` → `1 MiB`, `300000` → `293 KiB`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} bytes`;
}
