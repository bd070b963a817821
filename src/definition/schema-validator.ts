/**
 * Validates a parsed document against schemas/integration.schema.json and turns ajv's errors into
 * one clear message per mistake: anyOf alternatives collapse to what was expected, a wrong trigger
 * type reports the allowed types instead of every branch's complaints.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv2020, ErrorObject, Options } from 'ajv/dist/2020.js';
import { validate as integrationValidator } from './generated/integration-validator.js';
import { closest } from './suggest.js';

export const integrationSchemaPath = fileURLToPath(new URL('../../schemas/integration.schema.json', import.meta.url));

export interface SchemaProblem {
  pointer: string;
  /** Point at the member's key rather than its value (unknown or misplaced keys). */
  atKey: boolean;
  message: string;
}

const require = createRequire(import.meta.url);

/**
 * The one ajv configuration: the generated validators (validator-code.ts) are built with it, and
 * so is anything compiled at run time (test files, a connector outside the catalog). ajv itself
 * is loaded on the first call: loading and validating integrations runs generated code only and
 * never pays ajv's ~150 ms import.
 */
export function createAjv(extra: Options = {}): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as (ajv: Ajv2020) => void;
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, useDefaults: false, ...extra });
  ajv.addVocabulary(['x-expect']);
  addFormats(ajv);
  return ajv;
}

/**
 * The integration schema's validator is generated code (validator-code.ts, `npm run docs`): no
 * schema is read or compiled when files load.
 */
export function validateAgainstSchema(value: unknown): SchemaProblem[] {
  const validate = integrationValidator as unknown as { (v: unknown): boolean; errors?: ErrorObject[] | null };
  if (validate(value)) return [];
  return explainErrors(validate.errors ?? []);
}

/** Turns ajv errors into problems; exported for the per-action input checks too. */
export function explainErrors(errors: ErrorObject[], rootSchema?: Record<string, unknown>): SchemaProblem[] {
  // An anyOf speaks for the alternatives below it. When the value is an object, the object
  // branch is the one meant: keep its own errors and drop the other branches' type complaints.
  // Otherwise one "must be <x-expect>" says it all.
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const under = (e: ErrorObject, a: ErrorObject) => e.instancePath === a.instancePath || e.instancePath.startsWith(`${a.instancePath}/`);
  const dropped = new Set<ErrorObject>();
  for (const a of anyOfs) {
    const objectValue = !!a.data && typeof a.data === 'object' && !Array.isArray(a.data);
    for (const e of errors) {
      if (e === a || !under(e, a)) continue;
      if (!objectValue || (e.keyword === 'type' && e.instancePath === a.instancePath)) dropped.add(e);
    }
    if (objectValue) dropped.add(a);
  }
  // `if` errors only say "must match then": the errors of the `then` branch say why. Likewise a
  // `propertyNames` error only says "property name must be valid": the error about the name says why.
  const namedKey = (e: ErrorObject) => errors.some((n) => n !== e && n.propertyName !== undefined && n.instancePath === e.instancePath);
  const meaningful = errors.filter((e) => e.keyword !== 'if' && !dropped.has(e) && !(e.keyword === 'propertyNames' && namedKey(e)));
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of meaningful) {
    const p = explain(e, rootSchema);
    const k = `${p.pointer}|${p.message}`;
    if (!seen.has(k)) {
      seen.add(k);
      problems.push(p);
    }
  }
  return problems;
}

function explain(e: ErrorObject, root?: Record<string, unknown>): SchemaProblem {
  const at = e.instancePath;
  const where = describeLocation(at);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { pointer: at, atKey: false, message: `${where} is missing required key "${String(params.missingProperty)}"` };
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object })?.properties ?? {});
      if ((e.parentSchema as { patternProperties?: object })?.patternProperties) allowed.push('x-…');
      const hint = closest(extra, allowed);
      return {
        pointer: `${at}/${escapePointerToken(extra)}`,
        atKey: true,
        message: `unknown key "${extra}" in ${where}${hint ? ` — did you mean "${hint}"?` : ''}; allowed: ${allowed.join(', ')}`,
      };
    }
    case 'enum':
      return {
        pointer: at,
        atKey: false,
        message: `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${enumGot(e.data, params.allowedValues as unknown[])}`,
      };
    case 'const':
      return { pointer: at, atKey: false, message: `${where} must be ${JSON.stringify(params.allowedValue)}` };
    case 'type':
      return { pointer: at, atKey: false, message: `${where} must be ${article(String(params.type))}` };
    case 'anyOf': {
      const expect = (e.parentSchema as { 'x-expect'?: string })?.['x-expect'] ?? 'one of the allowed forms';
      return { pointer: at, atKey: false, message: `${where} must be ${expect}` };
    }
    case 'pattern':
      return { pointer: at, atKey: false, message: `${where} ${patternMessage(at, String(params.pattern))}` };
    case 'minProperties': {
      const keys = Object.keys((e.parentSchema as { properties?: object })?.properties ?? {});
      return { pointer: at, atKey: false, message: `${where} must not be empty${keys.length ? `: give ${keys.join(' and/or ')}` : ''}` };
    }
    case 'minItems':
      return { pointer: at, atKey: false, message: `${where} must have at least ${String(params.limit)} item(s)` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      if (/\/concurrency$/.test(at))
        return {
          pointer: at,
          atKey: false,
          message: `${where} must be between 1 and 50: the number of items run at once (1 runs them one after the other)`,
        };
      return { pointer: at, atKey: false, message: `${where} ${e.message ?? 'is out of range'}` };
    case 'not':
      if (e.propertyName !== undefined) {
        // A key the map may not have (`propertyNames: {not: …, description: why}`).
        const why = (e.parentSchema as { description?: string })?.description;
        return {
          pointer: `${at}/${escapePointerToken(e.propertyName)}`,
          atKey: true,
          message: `${where} may not have the key "${e.propertyName}"${why ? `: ${why}` : ''}`,
        };
      }
      return { pointer: at, atKey: false, message: `${where} ${e.message ?? 'is invalid'}` };
    case 'uniqueItems':
      return { pointer: at, atKey: false, message: `${where} must not repeat items` };
    default:
      void root;
      return { pointer: at, atKey: false, message: `${where} ${e.message ?? 'is invalid'}` };
  }
}

/**
 * The bad value of an enum mistake and the closest allowed value: `; got "webhok" — did you mean
 * "webhook"?` (the input checks reuse it for inputs whose whole value is an enum).
 */
export function enumGot(value: unknown, allowed: readonly unknown[]): string {
  const shown = JSON.stringify(value) ?? String(value);
  const got = `; got ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;
  const hint =
    typeof value === 'string'
      ? closest(
          value,
          allowed.filter((v): v is string => typeof v === 'string'),
        )
      : undefined;
  return hint !== undefined ? `${got} — did you mean "${hint}"?` : got;
}

function patternMessage(pointer: string, pattern: string): string {
  if (pointer === '/name') return 'must use lower-case letters, digits and dashes, starting with a letter or digit (e.g. new-hire-welcome)';
  if (/\/id$/.test(pointer)) return 'must start with a letter or _ and contain only letters, digits and _ (e.g. getWorker)';
  if (/\/action$/.test(pointer)) return 'must look like <connector>.<action>, e.g. core.transform or hcm.getWorkerById';
  if (/\/every$/.test(pointer)) return 'must be a duration such as 30s, 15m, 2h or 1d';
  if (/\/at$/.test(pointer)) return 'must be a time of day HH:MM (24-hour), e.g. 08:30';
  if (/\/(items|key)$/.test(pointer)) return 'must be an expression {% … %}';
  return `must match ${pattern}`;
}

function article(type: string): string {
  const t = type.replace(/,/g, ' or ');
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

function escapePointerToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** `/steps/1/inputs/limit` → `steps[1].inputs.limit`; '' → "the document". */
export function describeLocation(pointer: string): string {
  if (pointer === '') return 'the document';
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}
