/**
 * `hcm-runner validate` over deliberately broken files: each kind of mistake is reported at the
 * right line and column, in all three formats, with the contract's exit codes.
 */
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const dir = 'test/fixtures/invalid';

/** file → [line, column, part of the message] for every problem expected in it. */
const expected: Record<string, Array<[number, number, string]>> = {
  'alias.yaml': [[3, 10, 'input "level" of core.log must be one of "debug", "info", "warn", "error"; got "verbose"']],
  // Enum mistakes name the bad value and the closest allowed one.
  'bad-enum.yaml': [
    [3, 9, 'trigger.type must be one of "webhook", "schedule", "poll", "appEvent", "call"; got "webhok" — did you mean "webhook"?'],
    [9, 14, 'input "level" of core.log must be one of "debug", "info", "warn", "error"; got "eror" — did you mean "error"?'],
  ],
  'bad-cron.yaml': [
    [4, 9, 'cron "*/5 8-16 * * 1-9" does not parse'],
    [5, 13, 'unknown time zone "Europe/Berln" — did you mean "Europe/Berlin"?'],
  ],
  'bad-duration.yaml': [[4, 10, 'trigger.every must be a duration such as 30s, 15m, 2h or 1d']],
  'bad-expression.yaml': [[8, 38, 'expression does not parse']],
  'bad-inputs.yaml': [
    [6, 16, 'trigger.response.timeoutMs must be an integer'],
    [11, 19, 'input "statusCode" of core.respond must be an integer from 200 to 599; got 700'],
    [15, 5, 'core.splitString needs input "string"'],
    [20, 14, 'input "level" of core.log must be one of "debug", "info", "warn", "error"; got "loud"'],
  ],
  'bad-refs.yaml': [
    [16, 14, '$steps.second does not name an earlier step ("second" runs later)'],
    [19, 17, 'unknown connection "hrm" — did you mean "hcm"?'],
  ],
  'dup-b.yaml': [[2, 7, 'integration name "same-name" is already used by test/fixtures/invalid/dup-a.yaml']],
  'syntax.yaml': [[7, 28, 'YAML syntax error']],
  'unknown-action.yaml': [[6, 13, 'unknown action "hcm.getWorkerByld" — did you mean "hcm.getWorkerById"?']],
};
const total = Object.values(expected).reduce((n, list) => n + list.length, 0);

describe('hcm-runner validate', () => {
  it('reports every problem as FILE:LINE:COL: error: MESSAGE and exits 1', () => {
    const r = cli(['validate', dir]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(total);
    for (const [file, problems] of Object.entries(expected)) {
      for (const [line, col, text] of problems) {
        const prefix = `${dir}/${file}:${line}:${col}: error: `;
        expect(
          lines.some((l) => l.startsWith(prefix) && l.includes(text)),
          `${prefix}${text}\n---\n${r.stdout}`,
        ).toBe(true);
      }
    }
  });

  it('--format json gives {file, line, column, message, path} with JSON pointers', () => {
    const r = cli(['validate', dir, '--format', 'json']);
    expect(r.code).toBe(1);
    const problems = JSON.parse(r.stdout) as Array<{ file: string; line: number; column: number; message: string; path: string }>;
    expect(problems).toHaveLength(total);
    for (const p of problems) expect(Object.keys(p).sort()).toEqual(['column', 'file', 'line', 'message', 'path']);
    const refs = problems.find((p) => p.file.endsWith('bad-refs.yaml') && p.line === 19);
    expect(refs).toMatchObject({ column: 17, path: '/steps/1/connection' });
    const limit = problems.find((p) => p.file.endsWith('bad-inputs.yaml') && p.line === 11);
    expect(limit?.path).toBe('/steps/0/inputs/statusCode');
  });

  it('--format github writes workflow annotations', () => {
    const r = cli(['validate', `${dir}/bad-cron.yaml`, '--format', 'github']);
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^::error file=test\/fixtures\/invalid\/bad-cron\.yaml,line=4,col=9::cron /),
      expect.stringMatching(/^::error file=test\/fixtures\/invalid\/bad-cron\.yaml,line=5,col=13::unknown time zone /),
    ]);
  });

  it('exits 0 on valid files and on the shipped examples', () => {
    const r = cli(['validate', 'test/fixtures/valid', 'integrations']);
    expect(r.stderr).toMatch(/valid/);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(0);
  });

  it('exits 2 on usage errors', () => {
    expect(cli(['validate', '--format', 'xml']).code).toBe(2);
    expect(cli(['validate', '--bogus']).code).toBe(2);
    expect(cli(['validate', 'no/such/dir']).code).toBe(2);
    expect(cli(['frobnicate']).code).toBe(2);
    const help = cli(['validate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--format/);
  });

  it('honours HCM_RUNNER_MAX_STEPS, and refuses a value that is not a whole number instead of ignoring it', () => {
    const lowered = cli(['validate', 'test/fixtures/valid/hello.yaml'], { env: { HCM_RUNNER_MAX_STEPS: '1' } });
    expect(lowered.code).toBe(1);
    expect(lowered.stdout + lowered.stderr).toMatch(/hello\.yaml:\d+:\d+: error: steps has 2 steps; at most 1 are allowed \(HCM_RUNNER_MAX_STEPS\)/);
    for (const [name, value] of [
      ['HCM_RUNNER_MAX_STEPS', 'lots'],
      ['HCM_RUNNER_MAX_FILE_BYTES', '1.5e3x'],
    ]) {
      const bad = cli(['validate', 'test/fixtures/valid/hello.yaml'], { env: { [name]: value } });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain(`${name} must be a whole number of at least 1 (got "${value}")`);
    }
  });
});
