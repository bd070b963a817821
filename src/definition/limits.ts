/**
 * Bounds on one integration file, so that loading (at start, on reload, in `validate`) stays
 * short whatever a file holds: its size is checked before it is read, its step count before it is
 * compiled, and the values its aliases expand to while it is parsed. docs/authoring.md "File limits".
 */
import { settingSpecs } from '../settings/spec.js';

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
export const DEFAULT_MAX_FILE_BYTES = settingSpecs.maxFileBytes.default;
export const DEFAULT_MAX_STEPS = settingSpecs.maxSteps.default;
/** The limits when the caller gives none; commands pass the HCM_RUNNER_MAX_FILE_BYTES / _MAX_STEPS settings. */
export const DEFAULT_FILE_LIMITS: FileLimits = { maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxSteps: DEFAULT_MAX_STEPS };
/**
 * Values a file may expand to through aliases (`*anchor`): an anchor of 20,000 items aliased 1,000
 * times is 20 million values from a 100 KB file. A file without aliases never comes close.
 */
export const MAX_EXPANDED_VALUES = 1_000_000;

/** `1048576` → `1 MiB`, `300000` → `293 KiB`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} bytes`;
}
