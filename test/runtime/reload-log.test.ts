/**
 * What hot reload logs, read from the server's own log lines: a new and a renamed webhook
 * integration name their live and test URLs; a broken file says its last good version keeps
 * running and is never also reported as loaded; start-up does not repeat what the banner shows.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { poll, tempDir, write } from '../triggers/helpers.js';

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const hook = (name: string, value = 1) => `
name: ${name}
trigger: { type: webhook }
steps:
  - id: a
    action: core.transform
    inputs: { value: ${value} }
`;

async function start(files: Record<string, string>): Promise<{ server: RunningServer; dir: string; lines: Line[] }> {
  const dir = tempDir('hcm-reload-log-dir-');
  const data = tempDir('hcm-reload-log-data-');
  cleanups.push(dir.remove, data.remove);
  for (const [file, text] of Object.entries(files)) write(dir.path, file, text);
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const server = await startServer({
    dir: dir.path,
    dataDir: data.path,
    port: 0,
    adminToken: 'x',
    logger,
    retentionDays: 0,
    env: { ...process.env },
  });
  cleanups.push(() => server.close(500));
  return { server, dir: dir.path, lines };
}

const find = (lines: Line[], pattern: RegExp) => poll(async () => lines.find((l) => pattern.test(l.msg)));

describe('hot reload logs', () => {
  it('names the URLs of new and renamed integrations; a broken file is never called reloaded', async () => {
    const { server, dir, lines } = await start({ 'first.yaml': hook('first') });
    expect(lines.filter((l) => /added/.test(l.msg))).toEqual([]); // the banner lists the first load

    write(dir, 'second.yaml', hook('second'));
    const added = await find(lines, /^integration second added/);
    expect(added).toMatchObject(server.runtime.webhookUrls('second')!);
    expect(added.live).toMatch(/\/webhooks\/[A-Za-z0-9_-]+$/);

    write(dir, 'second.yaml', hook('renamed'));
    const renamed = await find(lines, /^integration second renamed to renamed/);
    expect(renamed).toMatchObject({ previousName: 'second', ...server.runtime.webhookUrls('renamed')! });
    expect(renamed.live).not.toBe(added.live);

    const before = lines.length;
    write(dir, 'first.yaml', hook('first').replace('type: webhook', 'type: webhok'));
    const broken = await find(lines, /first\.yaml has problems; last good version keeps running$/);
    expect(broken.level).toBe(50);
    expect(String((broken.problems as string[])[0])).toMatch(/first\.yaml:\d+:\d+: /);
    const summary = await poll(async () => lines.slice(before).find((l) => /integrations folder changed/.test(l.msg)));
    expect(summary).toMatchObject({ withProblems: [expect.stringMatching(/first\.yaml$/)] });
    // Nothing after the break says first.yaml (or integration first) was loaded or reloaded.
    const after = lines.slice(before);
    expect(after.filter((l) => /reloaded|added/.test(l.msg) && /first/.test(l.msg))).toEqual([]);
    const others = after.filter((l) => l !== broken).map(({ withProblems: _named, ...rest }) => rest);
    expect(others.filter((l) => JSON.stringify(l).includes('first.yaml'))).toEqual([]);
  });
});
