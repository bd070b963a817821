/**
 * The settings table of docs/server.md, straight from the spec (spec.ts): `npm run docs` writes
 * it between the markers; test/settings/settings.test.ts fails when it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rangeText } from './resolve.js';
import { fileVariable, type SettingSpec, settingKeys, specOf } from './spec.js';

export const settingsDocsPath = fileURLToPath(new URL('../../docs/server.md', import.meta.url));
const BEGIN = '<!-- BEGIN generated from src/settings/spec.ts by `npm run docs`; do not edit by hand. -->';
const END = '<!-- END generated settings -->';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (s: string) => `\`${s}\``;

function formOf(spec: SettingSpec): string {
  switch (spec.kind) {
    case 'int':
      return `whole number ${rangeText(spec.min, spec.max)}`;
    case 'bool':
      if (!spec.env) return 'switch';
      return spec.flag ? 'switch; variable `1`/`true`/`yes` or `0`/`false`/`no`' : '`1`/`true`/`yes` or `0`/`false`/`no`';
    case 'choice':
      return spec.choices.map(code).join(', ');
    case 'list':
      return 'comma-separated names';
    case 'string':
      return spec.secret ? 'text (secret)' : 'text';
  }
}

function defaultOf(spec: SettingSpec): string {
  if (spec.defaultText) return spec.defaultText.replace(/--[a-z-]+/g, (f) => code(f));
  if (spec.kind === 'bool') return spec.default ? 'on' : 'off';
  if (spec.kind === 'list') return spec.default.length ? spec.default.map(code).join(', ') : 'none';
  return spec.default === undefined ? 'none' : code(String(spec.default));
}

function row(spec: SettingSpec): string {
  const flag = spec.flag ? code(`--${spec.flag}${spec.arg ? ` ${spec.arg}` : ''}`) : '';
  const variable = spec.env ? [code(spec.env), ...(spec.secret ? [code(fileVariable(spec.env))] : [])].join(' or ') : '';
  return `| ${flag} | ${variable} | ${cell(formOf(spec))} | ${cell(defaultOf(spec))} | ${cell(spec.docs)} |`;
}

export function renderSettingsTable(): string {
  const out = [BEGIN, '', '| Flag | Variable | Form | Default | |', '|---|---|---|---|---|'];
  for (const key of settingKeys) out.push(row(specOf(key)));
  out.push('', END);
  return out.join('\n');
}

/** docs/server.md with its generated table replaced. */
export function renderSettingsDocs(current = readFileSync(settingsDocsPath, 'utf8')): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < 0) throw new Error(`${settingsDocsPath} has no settings table markers (${BEGIN} … ${END})`);
  return current.slice(0, start) + renderSettingsTable() + current.slice(end + END.length);
}

export function writeSettingsDocs(): string {
  writeFileSync(settingsDocsPath, renderSettingsDocs());
  return settingsDocsPath;
}
