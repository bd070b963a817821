/**
 * The one rule for saved payload names, checked when a payload is saved (admin API, console, CLI).
 * A name is part of URLs (`…/payloads/{name}/run`): `.` and `..` would be resolved away by every
 * browser and HTTP client (a console button named `..` posted to the integration's own `/run`),
 * and other characters need escaping everywhere they appear. So: letters, digits, `.`, `_`, `-`
 * and inner spaces, at most 100 characters.
 */

export const PAYLOAD_NAME_MAX_LENGTH = 100;

const ALLOWED = /^[A-Za-z0-9._ -]+$/;

/** What is wrong with `name` as a payload name, or undefined when it is a good one. */
export function payloadNameProblem(name: unknown): string | undefined {
  const rule = `use 1–${PAYLOAD_NAME_MAX_LENGTH} letters, digits, ".", "_", "-" or spaces, e.g. "order-created"`;
  if (typeof name !== 'string' || name === '') return `a payload needs a name: ${rule}`;
  const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
  if (name.length > PAYLOAD_NAME_MAX_LENGTH) return `payload name ${shown} is ${name.length} characters long: ${rule}`;
  if (!ALLOWED.test(name)) return `payload name ${shown} has characters that are not allowed: ${rule}`;
  if (name === '.' || name === '..') return `payload name ${shown} is not allowed (it is a path step in URLs): ${rule}`;
  if (name.trim() !== name) return `payload name ${shown} starts or ends with a space: ${rule}`;
  return undefined;
}
