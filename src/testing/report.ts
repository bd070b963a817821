/**
 * Output of `hcm-runner test`: text (PASS/FAIL per case with each failure's file:line:col, path,
 * expected and actual; the last line is exactly `N passed, M failed`), json, junit (JUnit XML for
 * CI systems) and github (workflow annotations `::error file=F,line=L,col=C::MESSAGE`).
 */
import { formatProblems, sortProblems } from '../definition/problems.js';
import type { Problem, SourcePosition } from '../definition/types.js';
import type { YamlSource } from '../definition/yaml-source.js';
import type { CaseWait } from './durable.js';
import type { CaseFailure, CaseResult } from './run-case.js';

export type TestFormat = 'text' | 'json' | 'junit' | 'github';
export const TEST_FORMATS: readonly TestFormat[] = ['text', 'json', 'junit', 'github'];

export interface FileReport {
  file: string;
  integration: string;
  src: YamlSource;
  cases: CaseResult[];
}

export interface TestReport {
  files: FileReport[];
  /** Invalid test files (and unreadable ones): nothing of theirs ran. */
  problems: Problem[];
}

export function counts(report: TestReport): { passed: number; failed: number } {
  const all = report.files.flatMap((f) => f.cases);
  const passed = all.filter((c) => c.passed).length;
  return { passed, failed: all.length - passed };
}

export function summaryLine(report: TestReport): string {
  const { passed, failed } = counts(report);
  return `${passed} passed, ${failed} failed`;
}

export function formatReport(report: TestReport, format: TestFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(jsonReport(report), null, 2);
    case 'junit':
      return junitReport(report);
    case 'github':
      return githubReport(report);
    default:
      return textReport(report);
  }
}

interface LocatedFailure extends CaseFailure {
  file: string;
  line: number;
  column: number;
}

function locate(f: FileReport, failure: CaseFailure): LocatedFailure {
  const pos: SourcePosition = f.src.positionOf(failure.pointer);
  return { ...failure, file: f.file, line: pos.line, column: pos.column };
}

/** A case's failures with their positions, in file order. */
function located(f: FileReport, c: CaseResult): LocatedFailure[] {
  return c.failures.map((x) => locate(f, x)).sort((a, b) => a.line - b.line || a.column - b.column);
}

function waitsText(c: CaseResult): string {
  let text = '';
  if (c.waits.length) text += `; retries would have waited ${c.waits.map((w) => `${w.ms} ms (${w.step})`).join(', ')}`;
  if (c.durableWaits.length) text += `; waits finished at once: ${c.durableWaits.map(describeWait).join(', ')}`;
  return text;
}

function describeWait(w: CaseWait): string {
  if (w.kind === 'callback') return `${w.step} (callback ${w.callbackUrl})`;
  return `${w.step} (${w.for ? `for ${w.for}` : `until ${w.until}`})`;
}

function show(v: unknown): string {
  return v === undefined ? '(nothing)' : JSON.stringify(v);
}

function textReport(report: TestReport): string {
  const lines: string[] = [];
  if (report.problems.length) lines.push(formatProblems(report.problems, 'text'));
  for (const f of report.files) {
    for (const c of f.cases) {
      lines.push(`${c.passed ? 'PASS' : 'FAIL'} ${f.file} › ${c.name} (${c.durationMs} ms${waitsText(c)})`);
      if (c.passed) continue;
      for (const failure of located(f, c)) {
        lines.push(`  ${failure.file}:${failure.line}:${failure.column}: ${failure.message}`);
        if (failure.path !== undefined && (isStructured(failure.expected) || isStructured(failure.actual) || failure.message.length > 160)) {
          lines.push(`      expected: ${show(failure.expected)}`, `      actual:   ${show(failure.actual)}`);
        }
      }
      const err = c.execution?.error?.message;
      if (err && !c.failures.some((x) => x.message.includes(err) || err.includes(x.message))) lines.push(`  the execution failed: ${err}`);
    }
  }
  if (report.files.length === 0 && report.problems.length === 0) lines.push('no test files (*.test.yaml) found');
  lines.push(summaryLine(report));
  return lines.join('\n');
}

function isStructured(v: unknown): boolean {
  return !!v && typeof v === 'object';
}

function jsonReport(report: TestReport) {
  const { passed, failed } = counts(report);
  return {
    passed,
    failed,
    problems: sortProblems(report.problems).map(({ file, line, column, message, path }) => ({ file, line, column, message, path })),
    files: report.files.map((f) => ({
      file: f.file,
      integration: f.integration,
      cases: f.cases.map((c) => {
        const at = f.src.positionOf(c.pointer);
        return {
          name: c.name,
          passed: c.passed,
          file: f.file,
          line: at.line,
          column: at.column,
          durationMs: c.durationMs,
          status: c.status,
          failures: located(f, c).map(({ pointer: _p, ...rest }) => rest),
          waits: c.waits,
          durableWaits: c.durableWaits,
          response: c.response,
          steps:
            c.execution?.steps.map((s) => ({
              id: s.id,
              action: s.action,
              status: s.status,
              attempts: s.attempts,
              results: s.results,
              error: s.error,
            })) ?? [],
          error: c.execution?.error,
        };
      }),
    })),
  };
}

function xml(s: string): string {
  // XML 1.0 has no place for most control characters, even escaped.
  // eslint-disable-next-line no-control-regex
  return s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function junitReport(report: TestReport): string {
  const { passed, failed } = counts(report);
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const invalidFiles = [...new Set(report.problems.map((p) => p.file))];
  const total = passed + failed + invalidFiles.length;
  const allTime = report.files.flatMap((f) => f.cases).reduce((t, c) => t + c.durationMs, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="hcm-runner test" tests="${total}" failures="${failed}" errors="${invalidFiles.length}" time="${seconds(allTime)}">`,
  ];
  for (const f of report.files) {
    const time = f.cases.reduce((t, c) => t + c.durationMs, 0);
    const fails = f.cases.filter((c) => !c.passed).length;
    out.push(`  <testsuite name="${xml(f.file)}" tests="${f.cases.length}" failures="${fails}" errors="0" time="${seconds(time)}">`);
    for (const c of f.cases) {
      const at = f.src.positionOf(c.pointer);
      const open = `    <testcase name="${xml(c.name)}" classname="${xml(f.integration)}" file="${xml(f.file)}" line="${at.line}" time="${seconds(c.durationMs)}"`;
      if (c.passed) {
        out.push(`${open}/>`);
        continue;
      }
      const failures = located(f, c);
      const first = failures[0];
      const message = first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : 'failed';
      const details = failures
        .map(
          (x) =>
            `${x.file}:${x.line}:${x.column}: ${x.message}${x.path !== undefined ? `\n  expected: ${show(x.expected)}\n  actual:   ${show(x.actual)}` : ''}`,
        )
        .join('\n');
      out.push(`${open}>`, `      <failure message="${xml(message)}" type="expectation">${xml(details)}</failure>`, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  for (const file of invalidFiles) {
    const problems = sortProblems(report.problems.filter((p) => p.file === file));
    const text = problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`);
    out.push(
      `  <testsuite name="${xml(file)}" tests="1" failures="0" errors="1" time="0.000">`,
      `    <testcase name="load ${xml(file)}" classname="invalid test file" file="${xml(file)}" line="${problems[0]?.line ?? 1}" time="0.000">`,
      `      <error message="${xml(text[0] ?? 'invalid test file')}" type="invalid">${xml(text.join('\n'))}</error>`,
      '    </testcase>',
      '  </testsuite>',
    );
  }
  out.push('</testsuites>');
  return out.join('\n');
}

function githubReport(report: TestReport): string {
  const lines: string[] = [];
  if (report.problems.length) lines.push(formatProblems(report.problems, 'github'));
  for (const f of report.files) {
    for (const c of f.cases) {
      if (c.passed) continue;
      // One annotation per failure, in file order, worded as `validate` words a problem.
      for (const x of located(f, c)) {
        lines.push(formatProblems([{ file: x.file, line: x.line, column: x.column, message: `${c.name}: ${x.message}`, path: x.pointer }], 'github'));
      }
    }
  }
  lines.push(summaryLine(report));
  return lines.join('\n');
}
