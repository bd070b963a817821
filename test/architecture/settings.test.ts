/**
 * The runtime's settings are read in one place: src/settings/ (the spec and its resolver). Every
 * other module is handed resolved values, so no module outside it may read a setting's variable
 * from an environment object, and nothing anywhere may write process.env (the integrations'
 * environment is passed down, e.g. with --sandbox's HCM_* values on top). Checked on the source
 * text, comments removed.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileVariable, settingKeys, specOf } from '../../src/settings/spec.js';
import { SRC, sourceFiles } from './import-graph.js';

/** The source without comments (strings stay: a message may name a variable). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

const SETTINGS_DIR = 'settings/';

/** Every variable a setting is read from: HCM_RUNNER_*, PORT, DATABASE_URL and the secrets' _FILE forms. */
const variables = settingKeys.flatMap((k) => {
  const s = specOf(k);
  return s.env ? [s.env, ...(s.secret ? [fileVariable(s.env)] : [])] : [];
});
const names = `(?:HCM_RUNNER_\\w+|${variables.map((v) => v.replace(/_/g, '_')).join('|')})`;

/** Ways a module reads a setting's variable itself. */
const READS: Array<[string, RegExp]> = [
  ['env.NAME', new RegExp(`\\benv\\??\\.${names}\\b`)],
  ["env['NAME']", new RegExp(`\\benv\\??\\.?\\[\\s*['"\`]${names}['"\`]\\s*\\]`)],
  ['env[CONSTANT]', /\benv\??\.?\[\s*[A-Z][A-Z0-9_]*\s*\]/],
  ["helper(env, 'HCM_RUNNER_…')", /\(\s*[\w.]*env\w*\s*,\s*['"`]HCM_RUNNER_/i],
];

/** Ways a module writes the process environment. */
const WRITES: Array<[string, RegExp]> = [
  ['process.env.X =', /process\.env\s*(?:\.\s*\w+|\[[^\]]+\])\s*(?:=(?!=)|\+=|\?\?=|\|\|=)/],
  ['Object.assign(process.env, …)', /Object\.assign\(\s*process\.env\b/],
  ['delete process.env.X', /delete\s+process\.env\b/],
  ['process.env = …', /process\.env\s*=(?!=)/],
  // Through an alias (`const env = process.env; env.X = …`, `Object.assign(env, …)`).
  ['env.X =', /\benv\s*(?:\.\s*\w+|\[[^\]]+\])\s*(?:=(?!=)|\+=|\?\?=|\|\|=)/],
  ['Object.assign(env, …)', /Object\.assign\(\s*env\b/],
];

function offences(rules: Array<[string, RegExp]>, skip: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    if (skip(rel)) continue;
    const lines = code(readFileSync(file, 'utf8')).split('\n');
    lines.forEach((line, i) => {
      for (const [what, re] of rules) if (re.test(line)) found.push(`src/${rel}:${i + 1}: ${what}: ${line.trim()}`);
    });
  }
  return found;
}

describe('settings are read in src/settings/ only', () => {
  it('no module outside src/settings/ reads a setting from the environment', () => {
    expect(offences(READS, (f) => f.startsWith(SETTINGS_DIR))).toEqual([]);
  });

  it('no module writes process.env', () => {
    expect(offences(WRITES, () => false)).toEqual([]);
  });

  it('the rules see the forms they are meant to catch', () => {
    const hits = (rules: Array<[string, RegExp]>, line: string) => rules.some(([, re]) => re.test(code(line)));
    for (const line of [
      'const x = env.HCM_RUNNER_CONCURRENCY;',
      'opts.env?.HCM_RUNNER_PUBLIC_URL',
      "positiveIntEnv(env, 'HCM_RUNNER_MAX_STEPS')",
      'const s = process.env[SECRET_ENV];',
      "env['HCM_RUNNER_ADMIN_PORT']",
      'process.env.DATABASE_URL',
    ])
      expect(hits(READS, line), line).toBe(true);
    for (const line of ['// env.HCM_RUNNER_X in a comment', "throw new Error('raise HCM_RUNNER_MAX_RESULT_BYTES')", 'scope.env[template.name]'])
      expect(hits(READS, line), line).toBe(false);
    for (const line of [
      'process.env.HCM_RUNNER_MAX_RESULT_BYTES = String(n);',
      'Object.assign(process.env, values);',
      "process.env['X'] ??= 'y'",
      'env.HCM_RUNNER_MAX_RESULT_BYTES = String(n);',
      'Object.assign(env, values);',
    ])
      expect(hits(WRITES, line), line).toBe(true);
    expect(hits(WRITES, 'if (process.env.X === "1") {}')).toBe(false);
  });
});
