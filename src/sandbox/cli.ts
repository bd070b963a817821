import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startSandbox, type TenantLimitSettings } from './index.js';

const USAGE = `Usage: hcm-runner sandbox [--port N] [--host H] [--token-lifetime SEC] [--seed N]
                           [--rate-limit N] [--max-concurrent N] [--quiet]

Starts the HCM sandbox: an HCM-compatible service with OAuth endpoints and every
connector action's endpoint over seeded data.

  --port N              port to listen on (default 8090; 0 = random)
  --host H              interface to bind (default 127.0.0.1)
  --token-lifetime SEC  access token lifetime in seconds (default 3600)
  --seed N              data seed (default 1)
  --rate-limit N        the tenant's rate limit: API requests beyond N in any second get 429
                        with Retry-After: 1 (default off)
  --max-concurrent N    API requests beyond N in flight at once get 429 too (default off)
  --quiet               do not log requests
  -h, --help            show this help
`;

/** `hcm-runner sandbox …`: runs until SIGINT/SIGTERM. Returns the exit code. */
export async function sandboxCommand(argv: string[]): Promise<number> {
  const opts: { port: number; host: string; tokenLifetimeSec: number; seed: number; quiet: boolean; tenantLimit: TenantLimitSettings } = {
    port: 8090,
    host: '127.0.0.1',
    tokenLifetimeSec: 3600,
    seed: 1,
    quiet: false,
    tenantLimit: {},
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (min: number, max: number) => {
      const v = value();
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer between ${min} and ${max} (got ${v})`);
      return n;
    };
    try {
      if (flag === '-h' || flag === '--help') {
        process.stdout.write(USAGE);
        return 0;
      } else if (flag === '--port') opts.port = int(0, 65535);
      else if (flag === '--host') opts.host = value();
      else if (flag === '--token-lifetime') opts.tokenLifetimeSec = int(1, 365 * 86400);
      else if (flag === '--seed') opts.seed = int(0, 2 ** 32 - 1);
      else if (flag === '--rate-limit') opts.tenantLimit.requestsPerSecond = int(1, 1_000_000);
      else if (flag === '--max-concurrent') opts.tenantLimit.maxConcurrent = int(1, 1_000_000);
      else if (flag === '--quiet') opts.quiet = true;
      else throw new Error(`unknown option: ${a}`);
    } catch (e) {
      process.stderr.write(`hcm-runner sandbox: ${(e as Error).message}\nRun 'hcm-runner sandbox --help' for usage.\n`);
      return 2;
    }
  }
  let sb;
  try {
    sb = await startSandbox(opts);
  } catch (e) {
    process.stderr.write(`hcm-runner sandbox: cannot listen on ${opts.host}:${opts.port}: ${(e as Error).message}\n`);
    return 1;
  }
  process.stderr.write(
    [
      `HCM sandbox listening on ${sb.url}`,
      `  API URL:        ${sb.apiUrl}`,
      `  Authorize URL:  ${sb.authorizeUrl}`,
      `  Token URL:      ${sb.tokenUrl}`,
      `  Client ID:      ${DEFAULT_CLIENT_ID}`,
      `  Client secret:  ${DEFAULT_CLIENT_SECRET}`,
      `  Refresh token:  ${sb.issueRefreshToken()}  (long-lived, for headless connections)`,
      `  Tenant:         any tenant id works (e.g. sandbox)`,
      `Press Ctrl+C to stop.`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sb.close();
  process.stderr.write('HCM sandbox stopped.\n');
  return 0;
}
