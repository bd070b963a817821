/**
 * The generated trigger reference at the end of docs/triggers.md: one table per trigger type,
 * straight from its spec (`npm run docs` writes it between the markers; a test keeps it fresh).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonSchema, OptionSpec } from '../definition/spec.js';
import { triggerSpecs } from './registry.js';

export const triggerDocsPath = fileURLToPath(new URL('../../docs/triggers.md', import.meta.url));
const BEGIN = '<!-- BEGIN generated from src/triggers/*/spec.ts by `npm run docs`; do not edit by hand. -->';
const END = '<!-- END generated -->';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A short human form of a schema fragment. */
function describeSchema(s: JsonSchema): string {
  if (typeof s.$ref === 'string') {
    const name = s.$ref.split('/').pop()!;
    const known: Record<string, string> = {
      expression: 'expression `{% … %}`',
      stringValue: 'string, `{env}` or `{file}`',
      duration: 'duration (`30s`, `15m`, `2h`, `1d`)',
      action: 'action key',
      inputs: 'map of inputs',
      step: 'step',
    };
    return known[name] ?? name;
  }
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (Array.isArray(s.anyOf)) return typeof s['x-expect'] === 'string' ? s['x-expect'] : 'one of several forms';
  if (s.type === 'array') return `list of ${s.items ? describeSchema(s.items as JsonSchema) : 'values'}`;
  if (s.type === 'object')
    return s.properties
      ? `object (${Object.keys(s.properties as object)
          .map((k) => `\`${k}\``)
          .join(', ')})`
      : 'object';
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` ${String(s.minimum)}–${String(s.maximum)}` : '';
  const pattern = typeof s.pattern === 'string' && !range ? ` matching \`${s.pattern}\`` : '';
  return s.type === undefined ? 'any value' : `${String(s.type)}${range}${pattern}`;
}

function row(key: string, o: OptionSpec, required: boolean): string {
  const def = o.default !== undefined ? `\`${JSON.stringify(o.default)}\`` : required ? 'required' : '';
  return `| \`${key}\` | ${cell(describeSchema(o.schema))} | ${cell(def)} | ${cell(o.description ?? '')} |`;
}

export function renderTriggerReference(): string {
  const out = [BEGIN, '', '## Reference: trigger keys', ''];
  out.push('Every key each trigger type takes, its form, default and meaning. `type` selects the table; any other key is an error.', '');
  for (const spec of triggerSpecs) {
    out.push(`### \`type: ${spec.type}\``, '', `${spec.description} More: ${spec.docs}.`, '');
    out.push('| Key | Form | Default | Meaning |', '|---|---|---|---|');
    for (const [k, o] of Object.entries(spec.options)) out.push(row(k, o, spec.required?.includes(k) ?? false));
    out.push('');
  }
  out.push(END);
  return out.join('\n');
}

/** docs/triggers.md with its generated part replaced (or appended when the markers are missing). */
export function renderTriggerDocs(current = readFileSync(triggerDocsPath, 'utf8')): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < 0) return `${current.trimEnd()}\n\n${renderTriggerReference()}\n`;
  return current.slice(0, start) + renderTriggerReference() + current.slice(end + END.length);
}

export function writeTriggerDocs(): string {
  writeFileSync(triggerDocsPath, renderTriggerDocs());
  return triggerDocsPath;
}
