/**
 * A readable rendering of pino's JSON lines for a person at a terminal (pino-pretty would do, but
 * one small function is all the runner needs):
 *
 *   17:45:01.234 INFO  execution succeeded  integration=worker-lookup status=succeeded durationMs=75
 *   17:45:03.002 ERROR integrations/x.yaml has problems; last good version keeps running  integration=x
 *       integrations/x.yaml:3:9: trigger.type must be one of …
 *
 * A `problems` list gets a line per problem. Colours only on a terminal without NO_COLOR.
 * Everything taken from the entry is escaped (log-escape.ts): only our own colour codes reach the
 * terminal as control characters, and one entry is never more lines than we make it.
 */
import { escapeControls } from './log-escape.js';

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: 'TRACE', colour: '90' },
  20: { name: 'DEBUG', colour: '90' },
  30: { name: 'INFO', colour: '32' },
  40: { name: 'WARN', colour: '33' },
  50: { name: 'ERROR', colour: '31' },
  60: { name: 'FATAL', colour: '35' },
};

/** Fields every line has, or that say nothing to a person reading a terminal. */
const HIDDEN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

export interface PrettyOptions {
  colour?: boolean;
}

export function formatLogLine(json: string, opts: PrettyOptions = {}): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${escapeControls(json.endsWith('\n') ? json.slice(0, -1) : json)}\n`;
  }
  const paint = (code: string, text: string) => (opts.colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const level = LEVELS[entry.level as number] ?? { name: String(entry.level), colour: '0' };
  const time =
    typeof entry.time === 'number' ? `${new Date(entry.time).toTimeString().slice(0, 8)}.${String(entry.time % 1000).padStart(3, '0')}` : '';
  const fields: string[] = [];
  const lists: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HIDDEN.has(key) || value === undefined) continue;
    if (key === 'problems' && Array.isArray(value)) {
      lists.push(...value.map((v) => `    ${escapeControls(typeof v === 'string' ? v : String(JSON.stringify(v)))}`));
      continue;
    }
    fields.push(`${paint('2', `${escapeControls(key)}=`)}${escapeControls(show(value))}`);
  }
  const head = `${paint('90', time)} ${paint(level.colour, level.name.padEnd(5))} ${escapeControls(String(entry.msg ?? ''))}`;
  return `${[fields.length ? `${head}  ${fields.join(' ')}` : head, ...lists].join('\n')}\n`;
}

function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** A pino destination that writes readable lines to `out`. */
export function prettyStream(out: NodeJS.WriteStream): { write(chunk: string): boolean } {
  const colour = !!out.isTTY && !process.env.NO_COLOR;
  return { write: (chunk: string) => out.write(formatLogLine(chunk, { colour })) };
}
