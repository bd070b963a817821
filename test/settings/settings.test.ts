/**
 * The settings spec (src/settings/): precedence (flag > variable > default), range errors naming
 * the flag or variable, secrets from `_FILE` variables, and the two things rendered from the spec
 * — `serve --help` and the table in docs/server.md (stale → `npm run docs`).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderSettingsDocs, settingsDocsPath } from '../../src/settings/docs.js';
import { renderServeHelp } from '../../src/settings/help.js';
import { MAX_SECRET_FILE_BYTES, resolveAllSettings, resolveSetting, SettingError } from '../../src/settings/resolve.js';
import { resolveServeSettings } from '../../src/settings/serve.js';
import { fileVariable, settingKeys, specOf } from '../../src/settings/spec.js';

const dir = mkdtempSync(join(tmpdir(), 'hcm-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const error = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SettingError);
    return (err as Error).message;
  }
  throw new Error('expected a SettingError');
};

describe('precedence', () => {
  it('a flag wins over its variable, the variable over the default; a blank variable is unset', () => {
    expect(resolveSetting('concurrency', {})).toBe(16);
    expect(resolveSetting('concurrency', { env: { HCM_RUNNER_CONCURRENCY: '3' } })).toBe(3);
    expect(resolveSetting('concurrency', { flags: { concurrency: '5' }, env: { HCM_RUNNER_CONCURRENCY: '3' } })).toBe(5);
    expect(resolveSetting('concurrency', { env: { HCM_RUNNER_CONCURRENCY: '  ' } })).toBe(16);
    expect(resolveSetting('port', { env: { PORT: '9000' } })).toBe(9000);
    expect(resolveSetting('allowPrivateNetwork', { flags: { 'allow-private-network': true }, env: { HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '0' } })).toBe(
      true,
    );
    expect(resolveSetting('allowPrivateNetwork', { env: { HCM_RUNNER_ALLOW_PRIVATE_NETWORK: 'Yes' } })).toBe(true);
    expect(resolveSetting('redactHeaders', { env: { HCM_RUNNER_REDACT_HEADERS: ' X-One, ,x-two' } })).toEqual(['x-one', 'x-two']);
    expect(resolveSetting('logFormat', { env: { HCM_RUNNER_LOG_FORMAT: 'JSON' } })).toBe('json');
    expect(resolveSetting('integrationBacklog', {})).toBeUndefined();
  });

  it('the defaults are the documented ones', () => {
    const s = resolveAllSettings({});
    expect(s).toMatchObject({
      dir: 'integrations',
      port: 8080,
      host: '127.0.0.1',
      dataDir: 'data',
      concurrency: 16,
      integrationConcurrency: 4,
      backlog: 1000,
      maxInterruptions: 3,
      maxResultBytes: 16_777_216,
      retentionDays: 14,
      allowPrivateNetwork: false,
      maxFormParts: 1000,
      redactHeaders: [],
      logLevel: 'info',
      shutdownGraceMs: 10_000,
      authMaxFailures: 10,
      authMaxLockoutSeconds: 60,
      consoleSessionSeconds: 43_200,
      maxAdminBodyBytes: 1_048_576,
      maxFileBytes: 131_072,
      maxSteps: 500,
    });
    for (const k of ['adminPort', 'adminHost', 'adminToken', 'secret', 'publicUrl', 'logFormat', 'replicaId', 'leaseSeconds'] as const)
      expect(s[k], k).toBeUndefined();
  });
});

describe('validation', () => {
  it('names the flag or the variable the value came from, and the allowed range', () => {
    expect(error(() => resolveSetting('port', { flags: { port: '70000' } }))).toBe('--port must be a whole number from 0 to 65535 (got "70000")');
    expect(error(() => resolveSetting('port', { env: { PORT: 'http' } }))).toBe('PORT must be a whole number from 0 to 65535 (got "http")');
    expect(error(() => resolveSetting('concurrency', { env: { HCM_RUNNER_CONCURRENCY: '0' } }))).toBe(
      'HCM_RUNNER_CONCURRENCY must be a whole number of at least 1 (got "0")',
    );
    expect(error(() => resolveSetting('maxSteps', { env: { HCM_RUNNER_MAX_STEPS: '1.5' } }))).toBe(
      'HCM_RUNNER_MAX_STEPS must be a whole number of at least 1 (got "1.5")',
    );
    expect(error(() => resolveSetting('retentionDays', { flags: { 'retention-days': '-1' } }))).toBe(
      '--retention-days must be a whole number of at least 0 (got "-1")',
    );
    expect(error(() => resolveSetting('logLevel', { env: { HCM_RUNNER_LOG_LEVEL: 'loud' } }))).toBe(
      'HCM_RUNNER_LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent (got "loud")',
    );
    expect(error(() => resolveSetting('allowPrivateNetwork', { env: { HCM_RUNNER_ALLOW_PRIVATE_NETWORK: 'on' } }))).toBe(
      'HCM_RUNNER_ALLOW_PRIVATE_NETWORK must be 1, true, yes, 0, false or no (got "on")',
    );
  });

  it('a value given by flag is not checked against the variable it overrides', () => {
    expect(resolveSetting('backlog', { flags: { backlog: '7' }, env: { HCM_RUNNER_BACKLOG: 'junk' } })).toBe(7);
  });

  it('serve checks settings against each other', () => {
    expect(error(() => resolveServeSettings({ env: { HCM_RUNNER_ADMIN_HOST: '10.0.0.1' } }))).toBe(
      '--admin-host needs --admin-port (or HCM_RUNNER_ADMIN_PORT)',
    );
    expect(error(() => resolveServeSettings({ flags: { port: '9000', 'admin-port': '9000' } }))).toMatch(
      /^--admin-port must differ from --port \(both 9000\)/,
    );
    expect(resolveServeSettings({ flags: { port: '9000' }, env: { HCM_RUNNER_ADMIN_PORT: '9001' } })).toMatchObject({ port: 9000, adminPort: 9001 });
  });
});

describe('secrets from files', () => {
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('every secret setting has a variable, hence a _FILE form', () => {
    const secrets = settingKeys.filter((k) => specOf(k).secret);
    expect(secrets).toEqual(expect.arrayContaining(['adminToken', 'secret', 'databaseUrl']));
    for (const k of secrets) expect(specOf(k).env, k).toBeTruthy();
  });

  it("reads the file's content without the trailing newline", () => {
    expect(resolveSetting('adminToken', { env: { HCM_RUNNER_ADMIN_TOKEN_FILE: file('token', 's3cret-token\n') } })).toBe('s3cret-token');
    expect(resolveSetting('secret', { env: { HCM_RUNNER_SECRET_FILE: file('secret', ' key with spaces \r\n') } })).toBe(' key with spaces ');
    expect(resolveSetting('databaseUrl', { env: { DATABASE_URL_FILE: file('db', 'postgres://u:p@h/db') } })).toBe('postgres://u:p@h/db');
    // A blank variable beside the file is unset, not a conflict.
    expect(resolveSetting('adminToken', { env: { HCM_RUNNER_ADMIN_TOKEN: '', HCM_RUNNER_ADMIN_TOKEN_FILE: file('t2', 'x\n') } })).toBe('x');
  });

  it('both the variable and its _FILE, a missing, unreadable, empty or huge file: errors naming the variable and path', () => {
    const token = file('t3', 'abc');
    expect(error(() => resolveSetting('adminToken', { env: { HCM_RUNNER_ADMIN_TOKEN: 'a', HCM_RUNNER_ADMIN_TOKEN_FILE: token } }))).toBe(
      'HCM_RUNNER_ADMIN_TOKEN and HCM_RUNNER_ADMIN_TOKEN_FILE are both set: set one of them',
    );
    const missing = join(dir, 'nope');
    expect(error(() => resolveSetting('secret', { env: { HCM_RUNNER_SECRET_FILE: missing } }))).toBe(
      `HCM_RUNNER_SECRET_FILE: cannot read ${missing}: no such file`,
    );
    expect(error(() => resolveSetting('secret', { env: { HCM_RUNNER_SECRET_FILE: dir } }))).toContain(`HCM_RUNNER_SECRET_FILE: cannot read ${dir}`);
    if (process.getuid?.() !== 0) {
      const locked = file('locked', 'x');
      chmodSync(locked, 0o000);
      expect(error(() => resolveSetting('secret', { env: { HCM_RUNNER_SECRET_FILE: locked } }))).toBe(
        `HCM_RUNNER_SECRET_FILE: cannot read ${locked}: permission denied`,
      );
    }
    const empty = file('empty', '\n');
    expect(error(() => resolveSetting('adminToken', { env: { HCM_RUNNER_ADMIN_TOKEN_FILE: empty } }))).toBe(
      `HCM_RUNNER_ADMIN_TOKEN_FILE: ${empty} is empty: put the secret in it, or unset HCM_RUNNER_ADMIN_TOKEN_FILE`,
    );
    const huge = file('huge', 'x'.repeat(MAX_SECRET_FILE_BYTES + 1));
    expect(error(() => resolveSetting('adminToken', { env: { HCM_RUNNER_ADMIN_TOKEN_FILE: huge } }))).toMatch(/at most 65536/);
  });

  it('settings that are no secret have no _FILE form', () => {
    expect(resolveSetting('publicUrl', { env: { HCM_RUNNER_PUBLIC_URL_FILE: file('url', 'http://x\n') } })).toBeUndefined();
  });
});

describe('rendered from the spec', () => {
  it('serve --help names every flag and every variable, with its default', () => {
    const help = renderServeHelp();
    for (const k of settingKeys) {
      const s = specOf(k);
      if (s.notServe) continue;
      if (s.flag) expect(help, k).toContain(`--${s.flag}${s.arg ? ` ${s.arg}` : ''}`);
      if (s.env) expect(help, k).toContain(s.env);
      if (s.secret) expect(help, k).toContain(fileVariable(s.env!));
    }
    expect(help).toMatch(/--concurrency N\s+executions running at once \(default \$HCM_RUNNER_CONCURRENCY or 16\)/);
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it('the settings table in docs/server.md is the one the spec gives (else: npm run docs)', () => {
    const current = readFileSync(settingsDocsPath, 'utf8');
    expect(current === renderSettingsDocs(current), 'docs/server.md is stale: run `npm run docs`').toBe(true);
    for (const k of settingKeys) {
      const s = specOf(k);
      if (s.env) expect(current, k).toContain(`\`${s.env}\``);
    }
  });
});
