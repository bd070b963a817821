/**
 * correlationKey and the version that ran, through a real server over HTTP: the key is stored and
 * found (API `?correlation=`, CLI `executions list --correlation`), a key whose expression fails or
 * is not a string is logged and left empty while the request is still accepted, and every
 * execution records the file's sha256 and the commit of the folder's git checkout — a replay says
 * it runs on the version loaded now.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAsync } from '../helpers/cli.js';
import { write } from '../triggers/helpers.js';
import { ADMIN, poll, startTestServer, tempDir, type TestServer } from './helpers.js';

const repo = tempDir('hcm-correlation-repo-');
const logs: Array<Record<string, any>> = [];
let s: TestServer;

const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo.path,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.test' },
  }).trim();
const sha256 = (file: string) =>
  createHash('sha256')
    .update(readFileSync(join(repo.path, file), 'utf8'))
    .digest('hex');

const hire = (message: string) => `
name: hire
correlationKey: "{% $trigger.body.data.workerId %}"
trigger: { type: webhook }
steps:
  - id: note
    action: core.log
    inputs: { message: ${message} }
`;

beforeAll(async () => {
  // The integrations folder is a subfolder of a git checkout, as in a deployment repository.
  git('init', '-q', '-b', 'main');
  write(repo.path, 'README', 'integrations\n');
  execFileSync('mkdir', ['-p', join(repo.path, 'integrations')]);
  write(join(repo.path, 'integrations'), 'hire.yaml', hire('first'));
  write(
    join(repo.path, 'integrations'),
    'broken-key.yaml',
    `
name: broken-key
correlationKey: "{% $error('no key today') %}"
trigger: { type: webhook }
steps:
  - id: note
    action: core.log
    inputs: { message: still runs }
`,
  );
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  s = await startTestServer({ dir: join(repo.path, 'integrations'), logger });
});
afterAll(async () => {
  await s?.stop();
  repo.remove();
});

const post = async (name: string, body: unknown) => {
  const res = await fetch(s.urls(name).live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200); // the default async answer: accepted, with its executionId
  return s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
};

describe('correlationKey', () => {
  it('is stored with the execution and found by the API and the CLI, exactly', async () => {
    const a = await post('hire', { workerId: '21001' });
    const b = await post('hire', { workerId: '21002' });
    const c = await post('hire', { workerId: '21001' });
    expect(a.correlationKey).toBe('21001');
    expect(b.correlationKey).toBe('21002');

    const found = await s.api('GET', '/executions?correlation=21001');
    expect(found.status).toBe(200);
    expect(found.body.map((e: any) => e.id)).toEqual([c.id, a.id]);
    expect(found.body[0]).toMatchObject({ correlationKey: '21001', integration: 'hire', status: 'succeeded' });
    expect((await s.api('GET', '/executions?correlation=2100')).body).toEqual([]);
    expect((await s.api('GET', `/executions?correlation=${'x'.repeat(300)}`)).status).toBe(400);

    const listed = await cliAsync(['executions', 'list', '--correlation', '21002', '--json', '--server', s.url], {
      env: { HCM_RUNNER_ADMIN_TOKEN: ADMIN },
    });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((e: any) => e.id)).toEqual([b.id]);
  });

  it('a key whose expression fails, or that is not a string, is logged and left empty: the request is still accepted', async () => {
    const failed = await post('broken-key', { workerId: '1' });
    expect(failed.status).toBe('succeeded');
    expect(failed.correlationKey).toBeUndefined();
    const warned = await poll(async () => logs.find((l) => l.integration === 'broken-key' && /correlationKey/.test(l.msg)));
    expect(warned).toMatchObject({ level: 40, executionId: failed.id });
    expect(warned.msg).toMatch(/correlationKey of broken-key: its expression failed: .*no key today.*recorded without one/);

    const numeric = await post('hire', { workerId: 21003 });
    expect(numeric.correlationKey).toBeUndefined();
    const warnedType = await poll(async () => logs.find((l) => l.executionId === numeric.id));
    expect(warnedType.msg).toMatch(/gave number, not a string \(wrap it in \$string/);
    // No key at all is not a problem: nothing logged.
    const none = await post('hire', { other: true });
    expect(none.correlationKey).toBeUndefined();
    expect(logs.find((l) => l.executionId === none.id)).toBeUndefined();
  });
});

describe('the version that ran', () => {
  it('is the file sha256 and the checkout commit; after a commit and a reload, runs and replays record the new one', async () => {
    const first = await post('hire', { workerId: 'v1' });
    const commit1 = git('rev-parse', 'HEAD');
    expect(first.version).toEqual({ sha256: sha256('integrations/hire.yaml'), commit: commit1 });
    expect((await s.api('GET', '/executions?correlation=v1')).body[0].version).toEqual(first.version);

    write(join(repo.path, 'integrations'), 'hire.yaml', hire('second'));
    git('commit', '-q', '-am', 'the fix');
    const commit2 = git('rev-parse', 'HEAD');
    expect(commit2).not.toBe(commit1);
    await s.api('POST', '/reload');
    const second = await post('hire', { workerId: 'v2' });
    expect(second.version).toEqual({ sha256: sha256('integrations/hire.yaml'), commit: commit2 });
    expect(second.version.sha256).not.toBe(first.version.sha256);

    const replay = await s.api('POST', `/executions/${first.id}/replay`);
    expect(replay.body.version).toEqual(second.version);
    const replayed = await s.waitForExecution(replay.body.executionId);
    expect(replayed.version).toEqual(second.version);
    expect(replayed.correlationKey).toBe('v1');
  });
});
