/**
 * The settings as an operator meets them, through the real CLI: the admin token from a file
 * (`HCM_RUNNER_ADMIN_TOKEN_FILE`, as Docker and Kubernetes mount secrets) is the one the admin API
 * and the client commands accept; a bad value stops `serve` before it listens, naming the flag or
 * variable (exit 2).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliAsync } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';
import { killServeChildren, poll, root, spawnServe, tempDir } from './helpers.js';

const tmp = tempDir('hcm-settings-cli-');
afterAll(() => {
  killServeChildren();
  tmp.remove();
});

const TOKEN = 'token-from-a-mounted-secret-file-0123456789';

describe('secrets from files', () => {
  it('serve takes its admin token from HCM_RUNNER_ADMIN_TOKEN_FILE; the API and client commands accept it', { timeout: 90_000 }, async () => {
    const tokenFile = join(tmp.path, 'admin-token.secret');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const port = await freePort();
    const fileEnv = { HCM_RUNNER_ADMIN_TOKEN: '', HCM_RUNNER_ADMIN_TOKEN_FILE: tokenFile };
    const served = spawnServe(
      ['--dir', join(root, 'test', 'fixtures', 'server', 'main'), '--port', String(port), '--data', join(tmp.path, 'data')],
      fileEnv,
    );
    await poll(async () => (served.output().includes('console:') ? true : undefined), 60_000);
    const base = `http://127.0.0.1:${port}`;
    const status = async (token: string) => (await fetch(`${base}/api/integrations`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await status(TOKEN)).toBe(200);
    expect(await status(TOKEN.slice(1))).toBe(401);
    // No token was created in the data directory: the configured one is used.
    expect(served.output()).not.toContain('stored in');

    const client = await cliAsync(['executions', 'list', '--server', base, '--data', join(tmp.path, 'elsewhere')], { env: fileEnv });
    expect(client.stderr).not.toContain('401');
    expect(client.code).toBe(0);
    served.child.kill('SIGTERM');
  });

  it('a token file that cannot be read stops serve with an error naming the variable and the path (exit 2)', { timeout: 60_000 }, async () => {
    const missing = join(tmp.path, 'no-such-secret');
    const r = await cliAsync(['serve', '--port', '0', '--data', join(tmp.path, 'd2')], {
      env: { HCM_RUNNER_ADMIN_TOKEN: '', HCM_RUNNER_ADMIN_TOKEN_FILE: missing },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`HCM_RUNNER_ADMIN_TOKEN_FILE: cannot read ${missing}: no such file`);
  });
});

describe('bad values', () => {
  it('stop serve before it listens, naming the flag or the variable and the range (exit 2)', { timeout: 60_000 }, async () => {
    const flag = await cliAsync(['serve', '--port', '70000', '--data', join(tmp.path, 'd3')]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--port must be a whole number from 0 to 65535 (got "70000")');
    const variable = await cliAsync(['serve', '--port', '0', '--data', join(tmp.path, 'd3')], { env: { HCM_RUNNER_CONCURRENCY: 'many' } });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('HCM_RUNNER_CONCURRENCY must be a whole number of at least 1 (got "many")');
  });
});
