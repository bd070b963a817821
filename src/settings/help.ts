/** `hcm-runner serve --help`, rendered from the settings spec (spec.ts). */
import { serveSettingKeys } from './serve.js';
import { fileVariable, type SettingSpec, specOf } from './spec.js';

const WIDTH = 100;
const INDENT = 26;

/** The default as `--help` says it: `$HCM_RUNNER_CONCURRENCY or 16`; the flag's variable first. */
function defaultWords(spec: SettingSpec, variable: (name: string) => string = (n) => `$${n}`): string | undefined {
  const plain = spec.defaultText ?? plainDefault(spec);
  const fromEnv = spec.env && spec.flag ? variable(spec.env) + (spec.secret ? ` or ${variable(fileVariable(spec.env))}` : '') : undefined;
  if (fromEnv && plain) return `${fromEnv} or ${plain}`;
  return fromEnv ?? plain;
}

function plainDefault(spec: SettingSpec): string | undefined {
  if (spec.kind === 'bool') return spec.default ? 'on' : undefined;
  if (spec.kind === 'list') return spec.default.length ? spec.default.join(',') : undefined;
  return spec.default === undefined ? undefined : String(spec.default);
}

function wrap(text: string, width: number): string[] {
  return wrapItems(text.split(/\s+/), width);
}

/** Items joined by spaces, never broken inside one. */
function wrapItems(items: string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    if (line && line.length + 1 + item.length > width) {
      lines.push(line);
      line = item;
    } else line = line ? `${line} ${item}` : item;
  }
  if (line) lines.push(line);
  return lines;
}

/** `head` in the left column, `text` wrapped beside it (or below it, when `head` is too wide). */
function entry(head: string, text: string): string[] {
  const body = wrap(text, WIDTH - INDENT);
  const pad = ' '.repeat(INDENT);
  const first = `  ${head}`;
  if (first.length < INDENT - 1) return [`${first.padEnd(INDENT)}${body[0] ?? ''}`, ...body.slice(1).map((l) => pad + l)];
  return [first, ...body.map((l) => pad + l)];
}

function textOf(spec: SettingSpec): string {
  const def = defaultWords(spec);
  return def ? `${spec.help} (default ${def})` : spec.help;
}

export function renderServeHelp(): string {
  const specs = serveSettingKeys.map(specOf);
  const flags = specs.filter((s) => s.flag);
  const usage = wrapItems(
    flags.map((s) => `[--${s.flag}${s.arg ? ` ${s.arg}` : ''}]`),
    WIDTH - 24,
  );
  const lines = [`Usage: hcm-runner serve ${usage[0]}`, ...usage.slice(1).map((l) => ' '.repeat(24) + l), ''];
  lines.push('Runs the runtime: webhook URLs, schedules and polls, the admin API, health and metrics.');
  lines.push('A flag wins over its environment variable; docs/server.md lists every setting.');
  for (const s of flags) lines.push(...entry(`--${s.flag}${s.arg ? ` ${s.arg}` : ''}`, textOf(s)));
  lines.push('', 'Environment (a secret may be read from a file instead: NAME_FILE=/path):');
  for (const s of specs.filter((x) => !x.flag && x.env)) {
    lines.push(...entry(s.secret ? `${s.env} or ${fileVariable(s.env!)}` : s.env!, textOf(s)));
  }
  return lines.join('\n');
}
