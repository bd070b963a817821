/**
 * What an HTTP response header may be written as (RFC 9110 §5.1 and §5.5): a name is a `token`,
 * a value visible ASCII, spaces and tabs. Node refuses to send anything else and throws while the
 * answer is being written — too late to answer cleanly — so integrations' headers are checked here
 * first: by `validate` where they are literals, by the engine and webhook intake where computed.
 *
 * Values are held to ASCII although RFC 9110 still tolerates `obs-text` (bytes 0x80–0xFF): such a
 * byte goes out as Latin-1, which no client reads back as the text that was meant.
 */

/** `token = 1*tchar` (RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space and horizontal tab; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/** Why `name` cannot be a header name, or undefined when it can. */
export function headerNameProblem(name: string): string | undefined {
  if (TOKEN.test(name)) return undefined;
  if (name === '') return 'is empty';
  const i = [...name].findIndex((ch) => !TOKEN.test(ch));
  return `is not a valid header name: ${describeChar(name, i)} (names are letters, digits and !#$%&'*+-.^_\`|~)`;
}

/** Why `value` cannot be a header value, or undefined when it can. */
export function headerValueProblem(value: string): string | undefined {
  if (FIELD_VALUE.test(value)) return undefined;
  const i = [...value].findIndex((ch) => !FIELD_VALUE.test(ch));
  return `is not a valid header value: ${describeChar(value, i)} (values are ASCII text without line breaks; percent-encode or base64 anything else)`;
}

function describeChar(text: string, index: number): string {
  const ch = [...text][index] ?? '';
  const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  const shown = ch === ' ' ? 'a space' : /[\x21-\x7e]/.test(ch) || ch.codePointAt(0)! > 0x9f ? `"${ch}" (${code})` : code;
  return `${shown} at character ${index + 1}`;
}

/**
 * Every problem of a header map written by an integration: each name, and each value that is
 * already known (`isKnown` false for values still to be computed). `at` says which header.
 */
export function headerMapProblems(
  headers: Record<string, unknown>,
  isKnown: (value: unknown) => boolean = () => true,
): { name: string; part: 'name' | 'value'; problem: string }[] {
  const out: { name: string; part: 'name' | 'value'; problem: string }[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameProblem = headerNameProblem(name);
    if (nameProblem) out.push({ name, part: 'name', problem: `header name ${JSON.stringify(name)} ${nameProblem}` });
    if (value === undefined || value === null || !isKnown(value)) continue;
    const valueProblem = headerValueProblem(String(value));
    if (valueProblem) out.push({ name, part: 'value', problem: `the value of header ${JSON.stringify(name)} ${valueProblem}` });
  }
  return out;
}
