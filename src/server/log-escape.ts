/**
 * Log lines carry caller data (a payload's text through `core.log`, names, error messages): none of
 * it may reach the operator's terminal as control characters, which could clear the screen, move
 * the cursor, set the window title or ring the bell (ESC, CSI, OSC, BEL …). Every log format
 * escapes them: C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F, which terminals may read as
 * 8-bit ESC sequences), written as `\u001b` the way JSON writes them.
 */

// The `g` forms replace; the others test (a `g` regex's test() carries state between calls).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');
/** JSON already escapes C0 inside strings; DEL and C1 it leaves as they are. */
const JSON_UNESCAPED = /[\u007f-\u009f]/;
const JSON_UNESCAPEDS = new RegExp(JSON_UNESCAPED.source, 'g');

const spelled = (ch: string) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text for the pretty format: every control character spelled out. */
export function escapeControls(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROLS, spelled) : text;
}

/**
 * One JSON log line with DEL and C1 escaped too. Outside strings JSON is ASCII, so these can only
 * sit inside a string, where `\u009b` means the same character: the line parses to the same value.
 * The line's own trailing newline stays.
 */
export function escapeJsonLine(line: string): string {
  return JSON_UNESCAPED.test(line) ? line.replace(JSON_UNESCAPEDS, spelled) : line;
}
