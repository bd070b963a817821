/**
 * The stored admin token and the CLI's reader of it (adminTokenFor, which `test --record` reuses),
 * plus the readable log format on a terminal. Real files in a temp directory.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminTokenFor } from '../../src/cli/admin-client.js';
import { loadOrCreateAdminToken, readStoredAdminToken } from '../../src/server/admin-token.js';
import { logFormat as formatFor } from '../../src/server/logger.js';
import { resolveSetting } from '../../src/settings/resolve.js';
import { formatLogLine } from '../../src/server/pretty-log.js';
import { startServer } from '../../src/server/index.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('hcm-admin-token-');
afterAll(() => tmp.remove());

describe('the stored admin token', () => {
  it('is created once with mode 0600 and the same on every later load', async () => {
    const data = join(tmp.path, 'a', 'data');
    expect(await readStoredAdminToken(data)).toBeUndefined();
    const first = await loadOrCreateAdminToken(data);
    expect(first.created).toBe(true);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    const again = await loadOrCreateAdminToken(data);
    expect(again).toMatchObject({ token: first.token, created: false });
    expect(await readStoredAdminToken(data)).toBe(first.token);
    // Two starts at once agree on one token.
    const other = join(tmp.path, 'b');
    const both = await Promise.all([loadOrCreateAdminToken(other), loadOrCreateAdminToken(other)]);
    expect(both[0].token).toBe(both[1].token);
    expect(both.filter((b) => b.created)).toHaveLength(1);
  });

  it('an empty file is an error that says what to do', async () => {
    const data = join(tmp.path, 'empty');
    await loadOrCreateAdminToken(data);
    writeFileSync(join(data, 'admin-token'), '\n');
    await expect(loadOrCreateAdminToken(data)).rejects.toThrow(/admin-token is empty: delete it .* or set HCM_RUNNER_ADMIN_TOKEN/);
  });

  it('the client takes HCM_RUNNER_ADMIN_TOKEN first, else the stored one', async () => {
    const data = join(tmp.path, 'client');
    expect(await adminTokenFor(data, {})).toEqual({ from: 'none', file: join(data, 'admin-token') });
    const { token } = await loadOrCreateAdminToken(data);
    expect(await adminTokenFor(data, {})).toMatchObject({ from: 'file', token });
    expect(await adminTokenFor(data, { HCM_RUNNER_ADMIN_TOKEN: 'from-env' })).toMatchObject({ from: 'env', token: 'from-env' });
  });

  it('startServer uses the stored token unless one is configured', async () => {
    const data = join(tmp.path, 'server');
    const env = { ...process.env };
    delete env.HCM_RUNNER_ADMIN_TOKEN;
    const opts = { dir: join(tmp.path, 'no-integrations'), dataDir: data, port: 0, logLevel: 'silent', env };
    const a = await startServer(opts);
    await a.close(0);
    const b = await startServer(opts);
    await b.close(0);
    expect(a.adminTokenGenerated).toBe(true);
    expect(b.adminTokenGenerated).toBe(false);
    expect(b.adminToken).toBe(a.adminToken);
    expect(readFileSync(join(data, 'admin-token'), 'utf8').trim()).toBe(a.adminToken);
    const c = await startServer({ ...opts, env: { ...env, HCM_RUNNER_ADMIN_TOKEN: 'configured' } });
    await c.close(0);
    expect(c).toMatchObject({ adminToken: 'configured', adminTokenFile: undefined });
  });
});

describe('log format', () => {
  it('pretty on a terminal, JSON otherwise; HCM_RUNNER_LOG_FORMAT decides when set', () => {
    const logFormat = (env: Record<string, string>, out: { isTTY?: boolean }) => formatFor(resolveSetting('logFormat', { env }), out);
    expect(logFormat({}, { isTTY: true })).toBe('pretty');
    expect(logFormat({}, { isTTY: false })).toBe('json');
    expect(logFormat({ HCM_RUNNER_LOG_FORMAT: 'json' }, { isTTY: true })).toBe('json');
    expect(logFormat({ HCM_RUNNER_LOG_FORMAT: 'pretty' }, { isTTY: false })).toBe('pretty');
    expect(() => logFormat({ HCM_RUNNER_LOG_FORMAT: 'xml' }, {})).toThrow(/HCM_RUNNER_LOG_FORMAT must be json or pretty \(got "xml"\)/);
  });

  it('renders one readable line per entry, problems on lines of their own', () => {
    const time = new Date(2026, 0, 2, 3, 4, 5, 67).getTime();
    expect(
      formatLogLine(
        JSON.stringify({
          level: 30,
          time,
          service: 'hcm-runner',
          pid: 1,
          integration: 'a',
          durationMs: 75,
          note: 'two words',
          msg: 'execution succeeded',
        }),
      ),
    ).toBe('03:04:05.067 INFO  execution succeeded  integration=a durationMs=75 note="two words"\n');
    expect(formatLogLine(JSON.stringify({ level: 50, time, file: 'x.yaml', problems: ['x.yaml:3:9: bad'], msg: 'x.yaml has problems' }))).toBe(
      '03:04:05.067 ERROR x.yaml has problems  file=x.yaml\n    x.yaml:3:9: bad\n',
    );
    expect(formatLogLine('not json')).toBe('not json\n');
  });
});
