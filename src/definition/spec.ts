/**
 * Specs: each key of the file format declared once — its JSON Schema fragment, its default and
 * its description. Triggers (`src/triggers/<type>/spec.ts`), connection types (their
 * `ConnectionTypeDecl`) and the shared parts of the file (`definition/schema/`) are written as
 * specs; the integration schema, the defaults compile applies, the reference docs and the editor
 * hints are all derived from them (`npm run docs` writes the generated files; tests fail when
 * they are stale). Specs are plain data plus a compile step: they import nothing that runs.
 */
import type { JsonSchema } from '../connectors/types.js';
import type { CompiledStep, CompiledTrigger, ValueTemplate } from './types.js';

export type { JsonSchema };

/** One key: how it is validated, what it defaults to, what it means. */
export interface OptionSpec {
  /** Validation fragment (type, enum, range, pattern, `$ref` to a shared `$defs` entry). */
  schema: JsonSchema;
  /** The value compile applies when the key is absent (also written into the schema). */
  default?: unknown;
  description?: string;
}

export type Options = Readonly<Record<string, OptionSpec>>;

/** What a trigger's compile step may use of the compiler: templates, steps and problems. */
export interface TriggerCompileContext {
  template(value: unknown, pointer: string): ValueTemplate;
  /** Compiles one step (action, connection, inputs) as in `steps:`; undefined when it is unusable. */
  step(raw: Record<string, unknown>, pointer: string, id: string): CompiledStep | undefined;
  stepList(list: unknown, pointer: string, what: string): CompiledStep[];
  /** Checks `$steps.<id>` references of a step against the ids that ran before it. */
  checkReferences(step: CompiledStep, earlier: string[]): void;
  problem(pointer: string, message: string, part?: 'key' | 'value'): void;
}

export interface TriggerSpec<T extends CompiledTrigger = CompiledTrigger> {
  type: T['type'];
  /** One line for the schema and the reference docs. */
  description: string;
  /** Where the trigger is explained at length. */
  docs: string;
  required?: readonly string[];
  /** Every key but `type`. */
  options: Options;
  compile(raw: Record<string, unknown>, ctx: TriggerCompileContext): T;
}

/** A spec's schema fragment with its default and description (annotations, in this order). */
export function optionSchema(o: OptionSpec): JsonSchema {
  return {
    ...o.schema,
    ...(o.default !== undefined ? { default: o.default } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
  };
}

/** A closed object whose keys are the given options. */
export function objectSchema(options: Options, required?: readonly string[], extra: Options = {}): JsonSchema {
  const all = { ...extra, ...options };
  return {
    type: 'object',
    ...(required?.length ? { required: [...required] } : {}),
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(all).map(([k, o]) => [k, optionSchema(o)])),
  };
}

/** The default a spec declares for `key`; throws when it declares none (a programming error). */
export function defaultOf<T>(options: Options, key: string): T {
  const o = options[key];
  if (!o || o.default === undefined) throw new Error(`spec declares no default for ${key}`);
  return o.default as T;
}

/** `raw[key]` when it has the type the schema already checked, else the spec's default. */
export function valueOr<T>(raw: Record<string, unknown>, options: Options, key: string, accept: (v: unknown) => boolean): T {
  return (accept(raw[key]) ? raw[key] : defaultOf<T>(options, key)) as T;
}

/** `raw[key]` when it is one of the spec's enum values, else the default. */
export function enumValue<T>(raw: Record<string, unknown>, options: Options, key: string): T {
  const allowed = (options[key]?.schema.enum ?? []) as readonly unknown[];
  return valueOr<T>(raw, options, key, (v) => allowed.includes(v));
}

/** `raw[key]` when it is a number (the schema checked its range), else the default. */
export function numberValue(raw: Record<string, unknown>, options: Options, key: string): number {
  return valueOr<number>(raw, options, key, (v) => typeof v === 'number');
}

/** `raw[key]` when it is a string, else the default. */
export function stringValue(raw: Record<string, unknown>, options: Options, key: string): string {
  return valueOr<string>(raw, options, key, (v) => typeof v === 'string');
}
