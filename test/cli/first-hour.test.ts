/**
 * A newcomer's first hour, as child processes: `serve --sandbox` on a free port with its own data
 * directory and no HCM_RUNNER_ADMIN_TOKEN, the client commands finding the token stored there,
 * `listen` following captures until Ctrl-C, a restart keeping the token (and the sandbox calls
 * working), `run … --sandbox` as README tour step 4 writes it, and a helpful enum message.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bin, cliAsync, repoRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';

const tmp = mkdtempSync(join(tmpdir(), 'hcm-first-hour-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The environment of someone who has configured nothing. */
function newcomerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HCM_RUNNER_LOG_LEVEL: 'info', ...extra };
  for (const k of Object.keys(env)) if (/^HCM_(?!RUNNER_FROM_SOURCE|RUNNER_LOG)/.test(k) || k === 'DATABASE_URL' || k === 'PORT') delete env[k];
  return { ...env, ...extra };
}

interface Proc {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once `pattern` appears in stdout or stderr (rejects after `ms`). */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exit(): Promise<number | null>;
}

const running: Proc[] = [];
afterEach(() => {
  for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

function start(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Proc {
  const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd ?? repoRoot, env: opts.env ?? newcomerEnv() });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout.on('data', (c) => {
    out += c;
    wake();
  });
  child.stderr.on('data', (c) => {
    err += c;
    wake();
  });
  const exited = new Promise<number | null>((r) =>
    child.on('close', (code) => {
      wake();
      r(code);
    }),
  );
  const proc: Proc = {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern, ms = 45_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out) ?? pattern.exec(err);
          if (m) {
            clearTimeout(t);
            waiters.splice(waiters.indexOf(check), 1);
            resolve(m);
          } else if (child.exitCode !== null) {
            clearTimeout(t);
            reject(new Error(`exited (${child.exitCode}) before ${pattern}\nstdout:\n${out}\nstderr:\n${err}`));
          }
        };
        const t = setTimeout(() => reject(new Error(`no ${pattern} within ${ms} ms\nstdout:\n${out}\nstderr:\n${err}`)), ms);
        waiters.push(check);
        check();
      }),
    exit: () => exited,
  };
  running.push(proc);
  return proc;
}

async function serve(dir: string, data: string, port: number, env?: NodeJS.ProcessEnv): Promise<Proc> {
  const p = start(['serve', '--dir', dir, '--data', data, '--port', String(port), '--sandbox'], { env: env ?? newcomerEnv() });
  await p.waitFor(/hcm-runner listening on http:\/\/127\.0\.0\.1:\d+/);
  await p.waitFor(/worker-lookup \[webhook\] ok\n\s+live: (\S+)\n\s+test: (\S+)/);
  return p;
}

async function stop(p: Proc): Promise<void> {
  p.child.kill('SIGTERM');
  expect(await p.exit()).toBe(0);
}

const examples = () => {
  const dir = join(tmp, `integrations-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  for (const f of readdirSync(join(repoRoot, 'integrations'))) if (!f.includes('.test.')) cpSync(join(repoRoot, 'integrations', f), join(dir, f));
  return dir;
};

describe('the first hour', () => {
  it('serve stores the admin token once (0600); client commands read it from --data; listen follows captures until Ctrl-C; a restart keeps it', {
    timeout: 180_000,
  }, async () => {
    const dir = examples();
    const data = join(tmp, 'data');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = await serve(dir, data, port);

    // The banner: console URL, where the token lives, and the export line with the token itself.
    const tokenFile = join(data, 'admin-token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(first.stderr()).toContain(`console: ${base}/console/`);
    expect(first.stderr()).toContain(`export HCM_RUNNER_ADMIN_TOKEN=${token}`);
    expect(first.stderr()).toMatch(/admin token: created and stored in /);
    // Not a terminal: the logs are JSON lines. The logger writes them asynchronously, so under a
    // loaded machine the first may come after the banner: wait for it.
    await first.waitFor(/^\{".*"msg":/m);
    expect(first.stdout().trim().split('\n')[0]).toMatch(/^\{".*"msg":/);

    // A client command with no HCM_RUNNER_ADMIN_TOKEN finds the token through --data …
    const urls = await cliAsync(['urls', 'worker-lookup', '--server', base, '--data', data], { env: newcomerEnv() });
    expect(urls.stderr).toBe('');
    expect(urls.code).toBe(0);
    const testUrl = /test: (\S+)/.exec(urls.stdout)![1]!;
    // … and through ./data when run where serve ran.
    const here = await cliAsync(['executions', 'list', '--server', base], { cwd: tmp, env: newcomerEnv() });
    expect(here.code, here.stderr).toBe(0);
    // Without either, the 401 says what to do.
    const lost = await cliAsync(['urls', '--server', base, '--data', join(tmp, 'elsewhere')], { env: newcomerEnv() });
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/401 .*pass --data with the server's data directory/);

    // listen: on, then each captured request with its id and the exact save command; Ctrl-C ends it.
    const listen = start(['listen', 'worker-lookup', '--server', base, '--data', data]);
    await listen.waitFor(/listening: requests to \S+ are captured \(Ctrl-C stops\)/);
    const sent = await fetch(`${testUrl}/from-the-test?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"workerId":"Employee_ID=21001"}',
    });
    expect(sent.status).toBe(200);
    const [line, id] = await listen.waitFor(
      /^([0-9a-f-]{36}) {2}POST \/from-the-test\?x=1 {2}\d\d:\d\d:\d\d {2}\d+ B {2}\{"workerId":"Employee_ID=21001"\}$/m,
    );
    expect(line).toBeDefined();
    await listen.waitFor(
      new RegExp(`save it: npx hcm-runner payloads save worker-lookup PAYLOAD_NAME --capture ${id} --server ${base} --data ${data}`),
    );
    listen.child.kill('SIGINT');
    expect(await listen.exit()).toBe(0);
    expect(listen.stdout()).toContain('listening mode off');
    const auth = { authorization: `Bearer ${token}` };
    const view = (await (await fetch(`${base}/api/integrations/worker-lookup`, { headers: auth })).json()) as { listening: boolean };
    expect(view.listening).toBe(false);
    // The printed command works as printed.
    const save = await cliAsync(['payloads', 'save', 'worker-lookup', 'first', '--capture', id!, '--server', base, '--data', data], {
      env: newcomerEnv(),
    });
    expect(save.code, save.stderr).toBe(0);

    // Restart: same token, nothing "created"; the sandbox-backed webhook still answers (a
    // previous sandbox's stored OAuth tokens are not reused). Logs asked for as pretty are lines.
    await stop(first);
    const second = await serve(dir, data, port, newcomerEnv({ HCM_RUNNER_LOG_FORMAT: 'pretty' }));
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    expect(second.stderr()).not.toContain('created and stored');
    expect((await fetch(`${base}/api/integrations`, { headers: auth })).status).toBe(200);
    const live = /worker-lookup \[webhook\] ok\n\s+live: (\S+)/.exec(second.stderr())![1]!;
    const answer = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"workerId":"Employee_ID=21001"}' });
    expect(await answer.json()).toMatchObject({ name: 'Hannah Dubois' });
    await second.waitFor(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}hcm-runner listening {2}url=/m);
    expect(second.stdout()).not.toMatch(/^\{/m);
    await stop(second);
  });

  it('run FILE --payload … --sandbox works as README tour step 4 writes it, also a second time', { timeout: 90_000 }, async () => {
    const payload = join(tmp, 'payload.json');
    writeFileSync(payload, '{"workerId": "Employee_ID=21001"}');
    const cwd = join(tmp, 'run-here');
    mkdirSync(cwd, { recursive: true });
    for (let i = 0; i < 2; i++) {
      const r = await cliAsync(['run', join(repoRoot, 'integrations/worker-lookup.yaml'), '--payload', payload, '--sandbox'], {
        cwd,
        env: newcomerEnv(),
      });
      expect(r.code, r.stderr).toBe(0);
      const record = JSON.parse(r.stdout);
      expect(record).toMatchObject({
        status: 'succeeded',
        result: { statusCode: 200, body: { name: 'Hannah Dubois', title: 'Senior Software Engineer' } },
      });
    }
    // Without --sandbox the same command names what is missing.
    const bare = await cliAsync(['run', join(repoRoot, 'integrations/worker-lookup.yaml'), '--payload', payload], { cwd, env: newcomerEnv() });
    expect(bare.code).toBe(1);
    expect(bare.stdout + bare.stderr).toMatch(/HCM_CLIENT_SECRET/);
  });

  it('new-hire-welcome logs what it did: welcomed a hire, nothing for other events', { timeout: 90_000 }, async () => {
    const messages = async (body: unknown) => {
      const payload = join(tmp, 'welcome.json');
      writeFileSync(payload, JSON.stringify(body));
      const r = await cliAsync(
        ['run', 'integrations/new-hire-welcome.yaml', '--payload', payload, '--sandbox', '--data', join(tmp, 'welcome-data')],
        { env: newcomerEnv() },
      );
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout).log as Array<{ level: string; message: string }>).filter((l) => l.level === 'info').map((l) => l.message);
    };
    expect(await messages({ type: 'hire', workerId: 'Employee_ID=21001' })).toEqual(['welcomed Hannah Dubois with "New Hire Welcome"']);
    expect(await messages({ type: 'termination', workerId: 'Employee_ID=21001' })).toEqual(['not a hire (type "termination"): nothing to do']);
  });

  it("the README's validate sample is what validate prints for that typo", async () => {
    const sample = /```text\n(integrations\/worker-lookup\.yaml:\d+:\d+: error: unknown action "(hcm\.\w+)".*)\n```/.exec(
      readFileSync(join(repoRoot, 'README.md'), 'utf8'),
    );
    expect(sample, 'README sample not found').not.toBeNull();
    const cwd = join(tmp, 'readme-sample');
    mkdirSync(join(cwd, 'integrations'), { recursive: true });
    const text = readFileSync(join(repoRoot, 'integrations/worker-lookup.yaml'), 'utf8');
    writeFileSync(join(cwd, 'integrations/worker-lookup.yaml'), text.replace('hcm.getStaffingWorkerById', sample![2]!));
    const r = await cliAsync(['validate'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe(sample![1]);
  });

  it('validate on trigger: {type: webhok} names the bad value and suggests webhook', async () => {
    const file = join(tmp, 'typo.yaml');
    writeFileSync(file, 'name: typo\ntrigger:\n  type: webhok\nsteps:\n  - id: a\n    action: core.transform\n    inputs: { value: 1 }\n');
    const r = await cliAsync(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${file}:3:9: error: trigger.type must be one of "webhook", "schedule", "poll", "appEvent", "call"; got "webhok" — did you mean "webhook"?`,
    );
  });
});
