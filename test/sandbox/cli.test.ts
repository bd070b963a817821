import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { sandboxCommand } from '../../src/sandbox/cli.js';

describe('hcm-runner sandbox command', () => {
  it('prints usage for --help and returns 0', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await sandboxCommand(['--help'])).toBe(0);
      expect(String(out.mock.calls[0]?.[0])).toMatch(/--port N/);
    } finally {
      out.mockRestore();
    }
  });

  it('returns 2 on an unknown flag or a bad port', async () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await sandboxCommand(['--bogus'])).toBe(2);
      expect(String(err.mock.calls[0]?.[0])).toMatch(/unknown option: --bogus/);
      expect(await sandboxCommand(['--port', 'abc'])).toBe(2);
    } finally {
      err.mockRestore();
    }
  });

  it('serves until SIGTERM and prints URLs and client credentials', async () => {
    const cli = fileURLToPath(new URL('../../src/sandbox/cli.ts', import.meta.url));
    const script = `import { sandboxCommand } from ${JSON.stringify(cli)}; process.exitCode = await sandboxCommand(['--port', '0', '--quiet']);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no start line: ${stderr}`)), 20_000);
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /Press Ctrl\+C/.test(stderr) && /listening on (http:\/\/\S+)/.exec(stderr);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    expect(stderr).toContain('sandbox-client');
    expect(stderr).toContain('sandbox-secret');
    expect(stderr).toContain(`${url}/ccx/oauth2/<tenant_id>/token`);
    expect((await fetch(`${url}/ccx/person/v4/people`)).status).toBe(401);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });
});
