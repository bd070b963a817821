/**
 * `{file: PATH}` values (docs/authoring.md "Values"): read when the integration runs, relative to
 * the integration file's folder, trailing newline dropped; a missing file fails like a missing env
 * variable, naming the file and the key. Through the real CLI: `validate`, and `run --sandbox`
 * with the HCM connection's client secret in a file (what the sandbox's token endpoint checks).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_SECRET } from '../../src/sandbox/index.js';
import { cliAsync, repoRoot } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'hcm-file-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const integration = `name: file-values
connections:
  hcm:
    type: hcm-oauth2
    authorizeUrl: { env: HCM_AUTHORIZE_URL }
    tokenUrl: { env: HCM_TOKEN_URL }
    apiUrl: { env: HCM_API_URL }
    tenantId: { env: HCM_TENANT }
    clientId: { env: HCM_CLIENT_ID }
    clientSecret: { file: secrets/client-secret }
    refreshToken: { env: HCM_REFRESH_TOKEN }
config:
  greeting: { file: greeting.txt }
  fallback: { file: not-there.txt, default: plain }
trigger: { type: webhook }
steps:
  - id: worker
    action: hcm.getStaffingWorkerById
    inputs:
      workerId: Employee_ID=21001
  - id: say
    action: core.log
    inputs:
      message: "{% $config.greeting & '|' & $config.fallback %}"
`;

function project(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'secrets'), { recursive: true });
  writeFileSync(join(root, 'file-values.yaml'), integration);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content);
  return join(root, 'file-values.yaml');
}

interface RunRecord {
  status: string;
  error?: { message: string };
  steps: Array<{ id: string; status: string; results?: unknown; error?: { message: string } }>;
}

/** `run --sandbox` from the repository root: relative paths must resolve against the file's folder, not the working directory. */
async function run(file: string): Promise<{ code: number; record: RunRecord; stderr: string }> {
  const r = await cliAsync(['run', file, '--sandbox', '--data', join(dir, `${Math.random()}`.slice(2))], { cwd: repoRoot });
  return { code: r.code, record: JSON.parse(r.stdout || '{}') as RunRecord, stderr: r.stderr };
}

describe('{file: PATH} values', () => {
  it('validate accepts them', { timeout: 60_000 }, async () => {
    const file = project('valid', {});
    const r = await cliAsync(['validate', file]);
    expect(r.stdout + r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
  });

  it('are read at run time, relative to the integration file, without the trailing newline', { timeout: 90_000 }, async () => {
    const file = project('good', { 'secrets/client-secret': `${DEFAULT_CLIENT_SECRET}\n`, 'greeting.txt': 'hello from a file\n' });
    const { code, record, stderr } = await run(file);
    expect(stderr).not.toContain('cannot be read');
    expect(record.status).toBe('succeeded');
    expect(code).toBe(0);
    expect(record.steps.find((s) => s.id === 'say')?.results).toMatchObject({ message: 'hello from a file|plain' });
  });

  it("a wrong secret in the file is what the sandbox's token endpoint sees", { timeout: 90_000 }, async () => {
    const file = project('wrong', { 'secrets/client-secret': 'not-the-secret\n', 'greeting.txt': 'hi' });
    const { code, record } = await run(file);
    expect(code).toBe(1);
    expect(record.status).toBe('failed');
    expect(JSON.stringify(record.error ?? record.steps)).toMatch(/401 invalid_client/);
  });

  it('a missing file fails the run naming the file and the key, like a missing env variable', { timeout: 90_000 }, async () => {
    const file = project('missing', { 'secrets/client-secret': DEFAULT_CLIENT_SECRET });
    const { code, record } = await run(file);
    expect(code).toBe(1);
    expect(record.status).toBe('failed');
    expect(JSON.stringify(record)).toContain(
      `file greeting.txt (${join(dir, 'missing', 'greeting.txt')}) cannot be read: no such file (needed by config.greeting)`,
    );
  });
});
