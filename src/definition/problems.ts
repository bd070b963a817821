/** Collects problems of one file, each positioned at the node it is about. */
import type { Problem, SourcePosition } from './types.js';
import type { YamlSource } from './yaml-source.js';

export class ProblemSink {
  readonly problems: Problem[] = [];
  constructor(private readonly src: YamlSource) {}

  add(pointer: string, message: string, position?: SourcePosition, part: 'key' | 'value' = 'value'): void {
    const pos = position ?? this.src.positionOf(pointer, part);
    this.problems.push({ file: this.src.file, line: pos.line, column: pos.column, message, path: pointer });
  }

  get count(): number {
    return this.problems.length;
  }
}

export function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}

export function formatProblems(problems: Problem[], format: 'text' | 'json' | 'github'): string {
  const sorted = sortProblems(problems);
  if (format === 'json')
    return JSON.stringify(
      sorted.map(({ file, line, column, message, path }) => ({ file, line, column, message, path })),
      null,
      2,
    );
  if (format === 'github') {
    return sorted.map((p) => `::error file=${p.file},line=${p.line},col=${p.column}::${githubEscape(p.message)}`).join('\n');
  }
  return sorted.map((p) => `${p.file}:${p.line}:${p.column}: error: ${p.message}`).join('\n');
}

/** GitHub workflow commands need %, CR and LF escaped in the message. */
function githubEscape(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
