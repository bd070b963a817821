/**
 * JSON from callers, parsed with a bound on nesting. `JSON.parse` itself copes with deep input,
 * but whatever walks the value afterwards (expressions, the execution record, the store) recurses
 * and runs out of stack on a few thousand levels; so depth is checked first, in one linear pass.
 */
import { HttpError } from '../../common/errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** Parses `text`; malformed JSON or nesting deeper than `maxDepth` is a 400 naming `what`. */
export function parseJsonBounded(text: string, maxDepth: number, what: string): unknown {
  // Fewer brackets than the limit cannot nest deeper than it: most bodies stop at this count.
  if (text.length > maxDepth && !fewerBracketsThan(text, maxDepth + 1) && nestingExceeds(text, maxDepth)) {
    throw new HttpError(
      400,
      `${what} nests arrays and objects more than ${maxDepth} levels deep; flatten it (the limit is fixed, see docs/server.md "Intake limits")`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `malformed JSON in ${what}: ${(err as Error).message}`);
  }
}

/** Whether `[` and `{` occur fewer than `n` times in all (native searches; stops at `n`). */
function fewerBracketsThan(text: string, n: number): boolean {
  let count = 0;
  for (let i = text.indexOf('['); i >= 0 && count < n; i = text.indexOf('[', i + 1)) count++;
  for (let i = text.indexOf('{'); i >= 0 && count < n; i = text.indexOf('{', i + 1)) count++;
  return count < n;
}

/** Whether brackets outside strings nest deeper than `maxDepth` (malformed text is left to JSON.parse). */
function nestingExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: jump to the next quote not escaped by an odd run of backslashes.
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return false;
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
