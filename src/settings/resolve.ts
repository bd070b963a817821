/**
 * Settings from their sources, by the spec (spec.ts): a flag wins over the environment, the
 * environment over the default. A value that does not fit is an error naming where it came from
 * (`--port`, `HCM_RUNNER_MAX_STEPS`, `HCM_RUNNER_SECRET_FILE`) and what is allowed. A blank
 * variable counts as unset.
 *
 * A secret setting may come from a file instead (`HCM_RUNNER_ADMIN_TOKEN_FILE=/run/secrets/…`,
 * the convention of Docker and Kubernetes secrets): the file's content without its trailing
 * newline. Setting both the variable and its `_FILE` is an error, as is a file that cannot be read.
 *
 * The only reader of `HCM_RUNNER_*` variables: everyone else is handed resolved values.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileVariable, type SettingKey, type Settings, type SettingSpec, settingKeys, specOf } from './spec.js';

/** A setting's value did not fit its spec (the CLI answers it as a usage error, exit 2). */
export class SettingError extends Error {}

export interface SettingSources {
  /** Parsed flags (`node:util` parseArgs values), by flag name. */
  flags?: Readonly<Record<string, string | boolean | undefined | (string | boolean)[]>>;
  /** The environment (default: none; callers pass process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A secret file larger than this is refused: a secret is a line, not a document. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** The settings `keys` from `sources`. */
export function resolveSettings<K extends SettingKey>(keys: readonly K[], sources: SettingSources): Pick<Settings, K> {
  const out = {} as Record<string, unknown>;
  for (const key of keys) out[key] = resolveOne(key, sources);
  return out as Pick<Settings, K>;
}

/** Every setting. */
export function resolveAllSettings(sources: SettingSources): Settings {
  return resolveSettings(settingKeys, sources);
}

/** One setting. */
export function resolveSetting<K extends SettingKey>(key: K, sources: SettingSources): Settings[K] {
  return resolveOne(key, sources) as Settings[K];
}

/** The raw text of a setting and where it came from, or undefined when unset. */
function rawOf(spec: SettingSpec, sources: SettingSources): { text: string | true; from: string } | undefined {
  if (spec.flag) {
    const v = sources.flags?.[spec.flag];
    if (typeof v === 'string' || v === true) return { text: v, from: `--${spec.flag}` };
  }
  if (!spec.env) return undefined;
  const env = sources.env ?? {};
  const value = nonBlank(env[spec.env]);
  if (spec.secret) {
    const fileVar = fileVariable(spec.env);
    const path = nonBlank(env[fileVar]);
    if (path !== undefined) {
      if (value !== undefined) throw new SettingError(`${spec.env} and ${fileVar} are both set: set one of them`);
      return { text: readSecretFile(fileVar, path), from: `${fileVar} (${path})` };
    }
  }
  return value === undefined ? undefined : { text: value, from: spec.env };
}

function nonBlank(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** A secret file's content without the trailing newline(s) editors and `echo` add. */
function readSecretFile(variable: string, path: string): string {
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_SECRET_FILE_BYTES)
      throw new Error(`it is ${size} bytes; a secret file may be at most ${MAX_SECRET_FILE_BYTES} (is it the right file?)`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new SettingError(`${variable}: cannot read ${path}: ${why}`);
  }
  const value = text.replace(/[\r\n]+$/, '');
  if (value.trim() === '') throw new SettingError(`${variable}: ${path} is empty: put the secret in it, or unset ${variable}`);
  return value;
}

function resolveOne(key: SettingKey, sources: SettingSources): unknown {
  const spec = specOf(key);
  const raw = rawOf(spec, sources);
  if (raw === undefined) return spec.kind === 'list' ? [...spec.default] : spec.default;
  const { text, from } = raw;
  switch (spec.kind) {
    case 'bool':
      if (text === true) return true;
      if (/^(1|true|yes)$/i.test(text.trim())) return true;
      if (/^(0|false|no)$/i.test(text.trim())) return false;
      throw new SettingError(`${from} must be 1, true, yes, 0, false or no (got "${text}")`);
    case 'int': {
      const n = typeof text === 'string' && text.trim() !== '' ? Number(text) : Number.NaN;
      if (!Number.isInteger(n) || n < spec.min || (spec.max !== undefined && n > spec.max))
        throw new SettingError(`${from} must be a whole number ${rangeText(spec.min, spec.max)} (got "${String(text)}")`);
      return n;
    }
    case 'choice': {
      const v = String(text).trim().toLowerCase();
      if (!spec.choices.includes(v)) throw new SettingError(`${from} must be ${orList(spec.choices)} (got "${String(text)}")`);
      return v;
    }
    case 'list':
      return String(text)
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);
    case 'string':
      if (text === true) throw new SettingError(`${from} needs a value`);
      return spec.secret ? text : text.trim();
  }
}

export function rangeText(min: number, max: number | undefined): string {
  return max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
}

export function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** parseArgs options for the settings that have flags (`--port N`, `--sandbox`). */
export function flagOptions(keys: readonly SettingKey[]): Record<string, { type: 'string' | 'boolean' }> {
  const out: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const key of keys) {
    const spec = specOf(key);
    if (spec.flag) out[spec.flag] = { type: spec.kind === 'bool' ? 'boolean' : 'string' };
  }
  return out;
}
