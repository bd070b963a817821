/**
 * Hot reload through the folder watcher, over real HTTP: edit, break (errors with line/column,
 * the last good version keeps answering), fix, add, duplicate name, rename (same URL), editors'
 * atomic saves, delete (404), requests in flight during all of it, executions finishing on the
 * version they started with, and schedules following POST /api/reload.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { nextRunAfter } from '../../src/triggers/schedule/timing.js';
import { gate, poll, tempDir, write } from './helpers.js';

const ADMIN = 'reload-admin';
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function start(env: Record<string, string> = {}): Promise<{ server: RunningServer; dir: string }> {
  const dir = tempDir('hcm-reload-dir-');
  const data = tempDir('hcm-reload-data-');
  cleanups.push(dir.remove, data.remove);
  const server = await startServer({
    dir: dir.path,
    dataDir: data.path,
    port: 0,
    adminToken: ADMIN,
    logLevel: 'silent',
    retentionDays: 0,
    shutdownGraceMs: 1000,
    allowPrivateNetwork: true, // a core.http step calls a fake on loopback
    env: { ...process.env, ...env },
  });
  cleanups.push(() => server.close(500));
  return { server, dir: dir.path };
}

async function api(server: RunningServer, method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const echo = (version: number | string, name = 'echo') => `
name: ${name}
trigger:
  type: webhook
  response: { mode: sync }
steps:
  - id: answer
    action: core.transform
    inputs:
      value: "{% {'version': ${version}, 'got': $trigger.body.data.n} %}"
`;

async function call(url: string, n = 0): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const answers = (url: string, version: number) =>
  poll(async () => {
    const r = await call(url);
    return r.status === 200 && r.body?.version === version ? r : undefined;
  });

/** An atomic save as editors do it: write a temp file beside the target, rename it over. */
function atomicSave(dir: string, file: string, text: string): void {
  const tmp = join(dir, `${file}.tmp-${process.pid}`);
  writeFileSync(tmp, text);
  renameSync(tmp, join(dir, file));
}

describe('hot reload', () => {
  it('edit, break, fix, add, duplicate, rename, atomic save, delete', async () => {
    const { server, dir } = await start();
    write(dir, 'echo.yaml', echo(1));
    // Added after start: picked up by the watcher.
    const view = await poll(async () => (await api(server, 'GET', '/integrations/echo')).body?.webhookUrls);
    const live: string = view.live;
    expect((await answers(live, 1)).body).toEqual({ version: 1, got: 0 });

    // Edit.
    write(dir, 'echo.yaml', echo(2));
    await answers(live, 2);

    // Break: status error with line and column; the last good version still answers.
    write(dir, 'echo.yaml', echo('$oops(('));
    const broken = await poll(async () => {
      const v = (await api(server, 'GET', '/integrations')).body.find((i: any) => i.name === 'echo');
      return v?.status === 'error' ? v : undefined;
    });
    expect(broken.errors[0]).toMatchObject({ line: 9 });
    expect(broken.errors[0].column).toBeGreaterThan(0);
    expect(broken.errors[0].file).toMatch(/echo\.yaml$/);
    expect(broken.webhookUrls.live).toBe(live);
    expect((await call(live)).body).toEqual({ version: 2, got: 0 });

    // Fix.
    write(dir, 'echo.yaml', echo(3));
    await answers(live, 3);
    expect((await api(server, 'GET', '/integrations/echo')).body.status).toBe('ok');

    // Add another file.
    write(dir, 'other.yaml', echo(10, 'other'));
    const other = await poll(async () => (await api(server, 'GET', '/integrations/other')).body?.webhookUrls?.live as string | undefined);
    await answers(other, 10);

    // A second file with an existing name is rejected with a clear error; the first keeps running.
    write(dir, 'zz-dup.yaml', echo(99));
    const dup = await poll(async () => {
      const v = (await api(server, 'GET', '/integrations')).body.find((i: any) => i.file.endsWith('zz-dup.yaml'));
      return v?.status === 'error' ? v : undefined;
    });
    expect(dup.errors[0].message).toMatch(/integration name "echo" is already used by .*echo\.yaml/);
    expect((await call(live)).body.version).toBe(3);
    rmSync(join(dir, 'zz-dup.yaml'));
    await poll(async () => ((await api(server, 'GET', '/integrations')).body.some((i: any) => i.file.endsWith('zz-dup.yaml')) ? undefined : true));

    // Rename the file: same integration, same URL.
    renameSync(join(dir, 'echo.yaml'), join(dir, 'renamed.yaml'));
    await poll(async () => ((await api(server, 'GET', '/integrations/echo')).body?.file?.endsWith('renamed.yaml') ? true : undefined));
    const renamed = (await api(server, 'GET', '/integrations/echo')).body;
    expect(renamed.webhookUrls.live).toBe(live);
    expect(renamed.status).toBe('ok');
    expect((await call(live)).body.version).toBe(3);

    // Atomic save (temp file + rename over the original).
    atomicSave(dir, 'renamed.yaml', echo(4));
    await answers(live, 4);
    expect((await api(server, 'GET', '/integrations')).body.map((i: any) => i.name).sort()).toEqual(['echo', 'other']);

    // Delete: the live URL is gone, the other integration untouched.
    rmSync(join(dir, 'renamed.yaml'));
    await poll(async () => ((await call(live)).status === 404 ? true : undefined));
    expect((await api(server, 'GET', '/integrations/echo')).status).toBe(404);
    expect((await call(other)).body.version).toBe(10);
  });

  it('a file rejected for a duplicate name loads once the other file is gone, under the same URL', async () => {
    const { server, dir } = await start();
    write(dir, 'a.yaml', echo(1, 'twin'));
    const live = await poll(async () => (await api(server, 'GET', '/integrations/twin')).body?.webhookUrls?.live as string | undefined);
    write(dir, 'b.yaml', echo(2, 'twin'));
    await poll(async () => {
      const v = (await api(server, 'GET', '/integrations')).body.find((i: any) => i.file.endsWith('b.yaml'));
      return v?.status === 'error' ? v : undefined;
    });
    expect((await call(live)).body.version).toBe(1);
    rmSync(join(dir, 'a.yaml'));
    await answers(live, 2);
    const list = (await api(server, 'GET', '/integrations')).body;
    expect(list.map((i: any) => [i.name, i.file.replace(/.*\//, ''), i.status])).toEqual([['twin', 'b.yaml', 'ok']]);
  });

  it('requests in flight during reloads all succeed; a running execution finishes on its version', async () => {
    const g = await gate();
    cleanups.push(() => g.close());
    const { server, dir } = await start({ GATE_URL: g.url });
    write(dir, 'echo.yaml', echo(1));
    write(
      dir,
      'held.yaml',
      `
name: held
trigger: { type: webhook, response: { mode: sync } }
steps:
  - id: wait
    action: core.http
    inputs: { url: { env: GATE_URL }, method: GET, timeoutMs: 60000 }
  - id: answer
    action: core.transform
    inputs: { value: { version: 1 } }
`,
    );
    const live = await poll(async () => (await api(server, 'GET', '/integrations/echo')).body?.webhookUrls?.live as string | undefined);
    const heldUrl = await poll(async () => (await api(server, 'GET', '/integrations/held')).body?.webhookUrls?.live as string | undefined);
    await answers(live, 1);

    // An execution of `held` starts on version 1 and waits at the gate.
    const heldResponse = call(heldUrl);
    await poll(async () => (g.hits === 1 ? true : undefined));

    // Meanwhile: a stream of requests while the file changes in every way.
    let stop = false;
    const seen: Array<{ status: number; version?: number }> = [];
    const workers = Array.from({ length: 4 }, async (_, w) => {
      let i = 0;
      while (!stop) {
        const r = await call(live, w * 10_000 + i++);
        seen.push({ status: r.status, version: r.body?.version });
      }
    });
    write(dir, 'echo.yaml', echo(2));
    await answers(live, 2);
    atomicSave(dir, 'echo.yaml', echo(3));
    await answers(live, 3);
    write(dir, 'echo.yaml', echo('$broken(('));
    await poll(async () => ((await api(server, 'GET', '/integrations/echo')).body.status === 'error' ? true : undefined));
    write(dir, 'echo.yaml', echo(4));
    await answers(live, 4);
    renameSync(join(dir, 'echo.yaml'), join(dir, 'echo2.yaml'));
    await poll(async () => ((await api(server, 'GET', '/integrations/echo')).body?.file?.endsWith('echo2.yaml') ? true : undefined));
    atomicSave(dir, 'echo2.yaml', echo(5));
    await answers(live, 5);
    stop = true;
    await Promise.all(workers);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((s) => s.status !== 200)).toEqual([]);
    expect(new Set(seen.map((s) => s.version))).not.toContain(undefined);

    // `held` changes while its execution runs: the execution finishes on version 1.
    write(
      dir,
      'held.yaml',
      `
name: held
trigger: { type: webhook, response: { mode: sync } }
steps:
  - id: other
    action: core.transform
    inputs: { value: { version: 2 } }
`,
    );
    await poll(async () => (server.runtime.registry.get('held')?.steps[0]?.id === 'other' ? true : undefined));
    expect((await call(heldUrl)).body).toEqual({ version: 2 });
    g.release(true);
    expect((await heldResponse).body).toEqual({ version: 1 });
  });

  it('schedules follow reloads: POST /api/reload re-syncs them; a removed schedule stops', async () => {
    const { server, dir } = await start();
    write(
      dir,
      'tick.yaml',
      'name: tick\ntrigger: { type: schedule, every: 1h }\nsteps:\n  - { id: t, action: core.transform, inputs: { value: 1 } }\n',
    );
    const reloaded = await api(server, 'POST', '/reload');
    expect(reloaded.status).toBe(200);
    expect(reloaded.body.map((i: any) => i.name)).toContain('tick');
    const expectNext = async (timing: Parameters<typeof nextRunAfter>[0]) =>
      poll(async () => {
        const before = nextRunAfter(timing, Date.now() - 1000)!.toISOString();
        const got = (await api(server, 'GET', '/integrations/tick')).body.nextRunAt;
        const after = nextRunAfter(timing, Date.now())!.toISOString();
        return got === before || got === after ? got : undefined;
      });
    await expectNext({ every: 3_600_000, timezone: 'UTC' });

    writeFileSync(
      join(dir, 'tick.yaml'),
      'name: tick\ntrigger: { type: schedule, cron: "0 30 9 * * 1", timezone: Asia/Tokyo }\nsteps:\n  - { id: t, action: core.transform, inputs: { value: 1 } }\n',
    );
    await api(server, 'POST', '/reload');
    await expectNext({ cron: '0 30 9 * * 1', pattern: '0 30 9 * * 1', timezone: 'Asia/Tokyo' });

    rmSync(join(dir, 'tick.yaml'));
    await api(server, 'POST', '/reload');
    await poll(async () => (server.runtime.triggers.instance('tick') === undefined ? true : undefined));
    expect((await api(server, 'GET', '/integrations/tick')).status).toBe(404);
  });
});
