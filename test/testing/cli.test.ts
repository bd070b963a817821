/**
 * `hcm-runner test` as a user runs it: the CLI as a child process in a temp copy of
 * test/fixtures/testing (good/ passes, failing/ fails once per kind of expectation, invalid/ holds
 * invalid test files), every output format parsed, exit codes, `validate` on test files, and a
 * case recorded from a real execution on a running server that passes when run back.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { cli, cliAsync, repoRoot } from '../helpers/cli.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';
import { poll } from '../server/helpers.js';

const work = mkdtempSync(join(tmpdir(), 'hcm-test-cmd-'));
cpSync(join(repoRoot, 'test', 'fixtures', 'testing'), work, { recursive: true });
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `hcm-runner test …` in the temp folder. */
const test = (args: string[], env: NodeJS.ProcessEnv = {}) => cli(['test', ...args], { cwd: work, env });

describe('hcm-runner test: passing files', () => {
  it('runs every case of every kind and ends with "N passed, 0 failed", exit 0', () => {
    const r = test(['good']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('7 passed, 0 failed');
    expect(lines.filter((l) => l.startsWith('PASS '))).toHaveLength(7);
    expect(r.stdout).toContain('PASS good/orders.test.yaml › two workers, the second retried after a 503');
  });

  it('answers mock sequences in order across forEach items and retries, and never sleeps', () => {
    // The step retries after 10 minutes: the run finishing at all shows nothing slept.
    const r = test(['good/orders.test.yaml', '--format', 'json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const c = report.files[0].cases.find((x: { name: string }) => x.name.startsWith('two workers'));
    expect(c).toMatchObject({ passed: true, status: 'succeeded', waits: [{ step: 'workers', ms: 600000 }] });
    expect(c.steps.find((s: { id: string }) => s.id === 'workers')).toMatchObject({
      attempts: 3,
      results: [{ descriptor: 'Ada' }, { descriptor: 'Bob' }],
    });
    expect(c.response).toMatchObject({
      statusCode: 200,
      headers: { 'x-count': '2' },
      body: { names: ['Ada', 'Bob'], tenant: 'acme', path: 'eu/west' },
    });
  });

  it('runs an error mock as the connector error: onError continue, $errors, status and code', () => {
    const r = test(['good/orders.test.yaml', '--format', 'json']);
    const c = JSON.parse(r.stdout).files[0].cases.find((x: { name: string }) => x.name.startsWith('a failed notification'));
    expect(c.passed).toBe(true);
    expect(c.steps.find((s: { id: string }) => s.id === 'notify')).toMatchObject({
      status: 'failed',
      error: {
        status: 500,
        code: 'server_error',
        message: 'integration orders, step notify (hcm.sendMessage): hcm.sendMessage: HCM answered 500 Internal Server Error: messaging down',
      },
    });
    expect(c.response.body).toMatchObject({ greeting: 'Hi', notified: false });
  });

  it('passes the example integrations’ own test files', () => {
    const r = cli(['test'], { cwd: repoRoot });
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(r.stdout).not.toContain('FAIL');
  });
});

describe('hcm-runner test: failing cases', () => {
  const failures = () => {
    const r = test(['failing', '--format', 'json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    const byName = Object.fromEntries(report.files[0].cases.map((c: { name: string }) => [c.name, c]));
    return { report, byName };
  };

  it('fails each case, with the path, expected, actual and file:line:col of the expectation', () => {
    const { report, byName } = failures();
    expect(report).toMatchObject({ passed: 0, failed: 6, problems: [] });
    const file = 'failing/orders.test.yaml';
    expect(byName['wrong status'].failures).toEqual([
      expect.objectContaining({ path: 'status', expected: 'failed', actual: 'succeeded', file, line: 10, column: 15 }),
    ]);
    expect(byName['wrong response body'].failures).toEqual([
      expect.objectContaining({ path: 'response.body.names[0]', expected: 'Bob', actual: 'Ada', file, line: 18, column: 52 }),
    ]);
    expect(byName['wrong step results'].failures).toEqual([
      expect.objectContaining({ path: 'steps.notify.results.id', expected: 'M2', actual: 'M1', file, line: 27, column: 53 }),
    ]);
    expect(byName['false assert'].failures).toEqual([
      expect.objectContaining({ path: 'assert', expected: true, actual: false, file, line: 36, column: 11 }),
    ]);
  });

  it('fails a calling step without a mock by naming the step and its action', () => {
    const { byName } = failures();
    expect(byName['missing mock'].failures[0]).toMatchObject({
      message: expect.stringMatching(/^step workers \(hcm\.getWorkerById\) calls out and has no mock/),
      line: 38,
      column: 5,
    });
    expect(byName['calls run out'].failures[0]).toMatchObject({
      message: expect.stringContaining('was called 2 times but mocks.workers.calls lists 1 answer(s)'),
      line: 49,
      column: 9,
    });
  });

  it('text: FAIL lines with file:line:col, expected and actual, then exactly "0 passed, 6 failed"', () => {
    const r = test(['failing']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('0 passed, 6 failed');
    expect(lines.filter((l) => l.startsWith('FAIL '))).toHaveLength(6);
    expect(r.stdout).toContain('  failing/orders.test.yaml:18:52: response.body.names[0]: expected "Bob", got "Ada"');
  });

  it('github: one ::error annotation per failed expectation at its file, line and col', () => {
    const r = test(['failing', '--format', 'github']);
    expect(r.code).toBe(1);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(annotations.length).toBeGreaterThanOrEqual(6);
    for (const a of annotations) expect(a).toMatch(/^::error file=failing\/orders\.test\.yaml,line=\d+,col=\d+::\S/);
    expect(annotations).toContain(
      '::error file=failing/orders.test.yaml,line=27,col=53::wrong step results: steps.notify.results.id: expected "M2", got "M1"',
    );
  });

  it('junit: well-formed XML with a <failure> per failed case carrying file:line:col', () => {
    const r = test(['failing', 'good', '--format', 'junit']);
    expect(r.code).toBe(1);
    const xml = r.stdout;
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expectBalancedXml(xml);
    expect(xml).toMatch(/<testsuites name="hcm-runner test" tests="13" failures="6" errors="0"/);
    expect((xml.match(/<testcase /g) ?? []).length).toBe(13);
    expect((xml.match(/<failure /g) ?? []).length).toBe(6);
    expect(xml).toContain('<failure message="failing/orders.test.yaml:18:52: response.body.names[0]: expected &quot;Bob&quot;, got &quot;Ada&quot;"');
  });
});

describe('hcm-runner test --sandbox', () => {
  it('answers unmocked HCM steps from the in-process sandbox; without it they fail the case', () => {
    const live = test(['sandbox', '--sandbox']);
    expect(live.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed');
    expect(live.code).toBe(0);
    const offline = test(['sandbox']);
    expect(offline.code).toBe(1);
    expect(offline.stdout).toContain('step workers (hcm.getWorkerById) calls out and has no mock');
  });
});

describe('hcm-runner test: invalid test files and usage', () => {
  it('reports every problem of an invalid file at its line:col and exits 2', () => {
    const r = test(['invalid']);
    expect(r.code).toBe(2);
    const problems = r.stdout.split('\n').filter((l) => l.includes(': error: '));
    expect(problems).toEqual([
      'invalid/bad.test.yaml:5:7: error: mocks: unknown step "wokers" — did you mean "workers"?; steps of orders: invalid, workers, notify, reply',
      'invalid/bad.test.yaml:8:9: error: expect.steps: unknown step "replyy" — did you mean "reply"?; steps of orders: invalid, workers, notify, reply',
      expect.stringMatching(/^invalid\/bad\.test\.yaml:10:\d+: error: expression does not parse/),
      'invalid/bad.test.yaml:13:7: error: trigger.scheduledAt does not apply to a webhook trigger; use body, headers, query, pathFragment, method',
      'invalid/bad.test.yaml:15:7: error: unknown key "stauts" in cases[1].expect — did you mean "status"?; allowed: status, response, steps, assert',
      expect.stringMatching(/^invalid\/unknown\.test\.yaml:1:14: error: unknown integration "no-such-integration"/),
    ]);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('0 passed, 0 failed');
  });

  it('validate reports the same problems (and exits 1), and treats test files as test files', () => {
    const r = cli(['validate', 'invalid', '--format', 'json'], { cwd: work });
    expect(r.code).toBe(1);
    const problems = JSON.parse(r.stdout) as Array<{ file: string; line: number; column: number; message: string }>;
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column}`)).toEqual(
      expect.arrayContaining([
        'invalid/bad.test.yaml:5:7',
        'invalid/bad.test.yaml:8:9',
        'invalid/bad.test.yaml:13:7',
        'invalid/unknown.test.yaml:1:14',
      ]),
    );
    const good = cli(['validate', 'good'], { cwd: work });
    expect(good.code).toBe(0);
    expect(good.stderr).toContain('6 file(s) valid');
  });

  it('exits 2 on usage errors', () => {
    expect(test(['--format', 'xml']).code).toBe(2);
    expect(test(['no-such-folder']).code).toBe(2);
    expect(test(['--bogus']).code).toBe(2);
    expect(test(['good', '--out', 'x.test.yaml']).code).toBe(2);
  });

  it('a bad expectation in a case of a valid file fails that case only', () => {
    writeFileSync(
      join(work, 'good', 'extra.test.yaml'),
      'integration: nightly\ncases:\n  - name: wrong label\n    trigger: { scheduledAt: "2025-06-01T02:00:00Z" }\n    expect:\n      steps:\n        label: { results: "AMER tomorrow" }\n',
    );
    try {
      const r = test(['good', '--format', 'json']);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ passed: 7, failed: 1 });
    } finally {
      rmSync(join(work, 'good', 'extra.test.yaml'));
    }
  });
});

describe('hcm-runner test --record', () => {
  let sb: Sandbox;
  let server: RunningServer;
  const dataDir = join(work, 'data');
  const recordDir = join(work, 'record');

  beforeAll(async () => {
    sb = await startSandbox({ port: 0, quiet: true });
    cpSync(join(work, 'good', 'orders.yaml'), join(recordDir, 'orders.yaml'));
    server = await startServer({
      dir: recordDir,
      port: 0,
      dataDir,
      logLevel: 'silent',
      retentionDays: 0,
      shutdownGraceMs: 1000,
      env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: '', ...sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }) },
    });
  });
  afterAll(async () => {
    await server?.close(500);
    await sb?.close();
  });

  /** A sync answer can come before the record is saved: wait until it is. */
  const finished = (id: string) =>
    poll(async () => {
      const r = await fetch(`${server.url}/api/executions/${id}`, { headers: { authorization: `Bearer ${server.adminToken}` } });
      const body = r.ok ? await r.json() : undefined;
      return body && (body.status === 'succeeded' || body.status === 'failed') ? body : undefined;
    });

  it('writes a case from a real execution that passes when run back', async () => {
    const urls = server.runtime.webhookUrls('orders')!;
    const res = await fetch(`${urls.test}/eu?tenant=acme`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-source': 'recorded' },
      body: JSON.stringify({ workerIds: ['Employee_ID=21001', 'Employee_ID=21002'] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-execution-id')!;
    const answered = await res.json();
    expect(answered.names).toHaveLength(2);
    await finished(id);

    // The token comes from the data dir (no HCM_RUNNER_ADMIN_TOKEN); the file is created beside the integration.
    const rec = await cliAsync(['test', '--record', id, '--dir', 'record', '--server', server.url, '--data', dataDir], {
      cwd: work,
      env: { HCM_RUNNER_ADMIN_TOKEN: '' },
    });
    expect(rec.stderr).toContain(`recorded "recorded from execution ${id}" in record/orders.test.yaml`);
    expect(rec.code).toBe(0);
    const written = readFileSync(join(recordDir, 'orders.test.yaml'), 'utf8');
    expect(written).toMatch(/^# yaml-language-server: \$schema=.*schemas\/integration-test\.schema\.json/);
    expect(written).toContain('integration: orders');

    // The server never takes a test file for an integration, also after a reload.
    const reload = await fetch(`${server.url}/api/reload`, { method: 'POST', headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(reload.status).toBe(200);
    const listed = await (await fetch(`${server.url}/api/integrations`, { headers: { authorization: `Bearer ${server.adminToken}` } })).json();
    expect(listed.map((i: { name: string; status: string }) => `${i.name}:${i.status}`)).toEqual(['orders:ok']);

    // Run back offline: no sandbox, the recorded answers are the mocks.
    const back = test(['record', '--format', 'json'], { HCM_API_URL: 'http://127.0.0.1:9/nowhere' });
    expect(back.code).toBe(0);
    const report = JSON.parse(back.stdout);
    expect(report).toMatchObject({ passed: 1, failed: 0 });
    const c = report.files[0].cases[0];
    expect(c.response).toMatchObject({ statusCode: 200, body: answered });
    expect(c.steps.find((s: { id: string }) => s.id === 'workers').results).toHaveLength(2);

    // A second recording of the same execution is refused; another one is appended.
    const again = await cliAsync(['test', '--record', id, '--dir', 'record', '--server', server.url, '--data', dataDir], {
      cwd: work,
      env: { HCM_RUNNER_ADMIN_TOKEN: '' },
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already has a case');
  });

  it("finds the integration in the --out file's folder when --dir is not given", async () => {
    const urls = server.runtime.webhookUrls('orders')!;
    const res = await fetch(`${urls.test}/eu`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workerIds: ['Employee_ID=21001'] }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-execution-id')!;
    await finished(id);
    // No --dir: ./integrations does not exist in `work`; record/ (the folder the server runs) holds it.
    const rec = await cliAsync(['test', '--record', id, '--out', 'record/by-out.test.yaml', '--server', server.url, '--data', dataDir], {
      cwd: work,
    });
    expect(rec.stderr).toContain('recorded');
    expect(rec.code).toBe(0);
    expect(readFileSync(join(recordDir, 'by-out.test.yaml'), 'utf8')).toContain('integration: orders\n');
    rmSync(join(recordDir, 'by-out.test.yaml'));
  });

  it('records a failed execution: the error the service answered becomes the mock', async () => {
    const urls = server.runtime.webhookUrls('orders')!;
    const res = await fetch(urls.test, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workerIds: ['no-such-worker'] }),
    });
    expect(res.status).toBe(500);
    const id = res.headers.get('x-execution-id')!;
    await finished(id);
    const out = join(work, 'record-failed.test.yaml');
    const rec = await cliAsync(
      ['test', '--record', id, '--dir', 'record', '--server', server.url, '--data', dataDir, '--out', 'record-failed.test.yaml'],
      { cwd: work },
    );
    expect(rec.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('integration: record/orders.yaml');
    expect(text).toMatch(/statusCode: 404/);
    const back = test(['record-failed.test.yaml']);
    expect(back.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed');
    expect(back.code).toBe(0);
  });
});

/** A small XML well-formedness check: a prolog, then elements that open and close in order. */
function expectBalancedXml(xml: string): void {
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w-]*)((?:\s+[\w-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/g;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = tag.exec(body))) {
    consumed += m[0].length;
    if (m[5] !== undefined) {
      expect(m[5]).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
      continue;
    }
    if (m[1]) expect(stack.pop()).toBe(m[2]);
    else if (!m[4]) stack.push(m[2]!);
  }
  expect(consumed).toBe(body.length);
  expect(stack).toEqual([]);
}
