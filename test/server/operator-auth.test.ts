/**
 * The operator's surface under attack, over real HTTP (docs/security.md "Operator authentication"):
 * bounded sign-in and admin bodies, failed tokens slowed per client (429 + Retry-After, a capped
 * lockout, a log line per burst, a metric), sessions revoked durably across a restart, sign out
 * everywhere, hono's CSRF check and security headers on the console, and weak admin tokens.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { ADMIN, fixtures, killServeChildren, poll, spawnServe, startTestServer, tempDir, type TestServer } from './helpers.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});
afterAll(() => killServeChildren());

async function server(opts: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(opts);
  cleanups.push(() => s.stop());
  return s;
}

/** A sign-in post as the console's own page sends it (same origin, so CSRF lets it through). */
function signIn(base: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${base}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers },
    body,
    redirect: 'manual',
  });
}

/** The session cookie (`name=value`) a successful sign-in sets. */
async function sessionCookie(base: string, token = ADMIN): Promise<string> {
  const res = await signIn(base, `token=${encodeURIComponent(token)}`);
  expect(res.status).toBe(303);
  return /^(hcm_console=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
}

const consoleStatus = async (base: string, cookie: string) =>
  (await fetch(`${base}/console/executions`, { headers: { cookie }, redirect: 'manual' })).status;

interface Line {
  msg: string;
  [key: string]: unknown;
}

describe('bounded bodies', () => {
  // 524,288 fields: 0.35–0.9 s of parsing each before the limit.
  const hugeForm = 'a&'.repeat(512 * 1024);

  it('a 1 MiB urlencoded sign-in body is refused with 413 before it is parsed, also without Content-Length', async () => {
    const s = await server();
    const declared = await signIn(s.url, hugeForm);
    expect(declared.status).toBe(413);
    expect(await declared.text()).toMatch(/sign-in form is larger than 4096 bytes/);
    // Streamed (chunked): counted while it arrives and refused at the limit.
    const chunked = await fetch(`${s.url}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new Blob([hugeForm]).stream(),
      duplex: 'half',
      redirect: 'manual',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    // A right sign-in still works afterwards.
    expect(await sessionCookie(s.url)).toMatch(/^hcm_console=v2\./);
  });

  it('/healthz stays responsive while four senders push 1 MiB sign-in bodies', { timeout: 30_000 }, async () => {
    const s = await server();
    let stop = false;
    let sent = 0;
    const sender = async () => {
      while (!stop) {
        await signIn(s.url, hugeForm).then(
          async (r) => {
            sent++;
            await r.arrayBuffer();
          },
          () => undefined,
        );
        await sleep(100);
      }
    };
    const senders = Array.from({ length: 4 }, sender);
    // Sequential health checks for 3 s. Unbounded, the senders kept the event loop busy parsing
    // (6 answers in 3 s measured); bounded, each check takes milliseconds (~500 measured). 20
    // leaves a wide margin both ways.
    let answers = 0;
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      const res = await fetch(`${s.url}/healthz`);
      if (res.status === 200) answers++;
      await res.arrayBuffer();
    }
    stop = true;
    await Promise.all(senders);
    expect(sent).toBeGreaterThan(4);
    expect(answers).toBeGreaterThanOrEqual(20);
  });

  it('admin API JSON bodies are capped (HCM_RUNNER_MAX_ADMIN_BODY_BYTES) and their nesting bounded', async () => {
    const s = await server({ auth: { maxAdminBodyBytes: 1024 } });
    expect((await s.api('POST', '/integrations/echo/run?test=true', { small: 'x'.repeat(900) })).status).toBe(200);
    const big = await s.api('POST', '/integrations/echo/run?test=true', { big: 'x'.repeat(2000) });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatch(/larger than 1024 bytes/);
    await s.api('POST', '/integrations/echo/payloads', { name: 'p', trigger: {} });
    const nested = await fetch(`${s.url}/api/integrations/echo/payloads/p`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: `{"trigger":${'['.repeat(300)}${']'.repeat(300)}}`,
    });
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as { error: string }).error).toMatch(/nests arrays and objects more than 256 levels/);
  });
});

describe('failed authentication is slowed, logged and counted', () => {
  async function throttled(): Promise<{ s: TestServer; lines: Line[] }> {
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    const s = await server({ logger, auth: { maxFailures: 3, maxLockoutSeconds: 1 } });
    return { s, lines };
  }

  it('wrong bearer tokens: 401 up to the limit, then 429 with Retry-After even for the right token; it works again after the cap', async () => {
    const { s, lines } = await throttled();
    for (let i = 0; i < 3; i++) expect((await s.api('GET', '/integrations', undefined, `wrong-${i}`)).status).toBe(401);
    const locked = await s.api('GET', '/integrations');
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('1');
    expect(locked.body.error).toMatch(/too many wrong admin tokens .* try again in 1 s/);
    // A guess during the lockout is not even compared.
    expect((await s.api('GET', '/integrations', undefined, 'wrong-again')).status).toBe(429);
    // The lockout never exceeds the cap (1 s here): the right token works again after it.
    const ok = await poll(async () => {
      const r = await s.api('GET', '/integrations');
      return r.status === 200 ? r : undefined;
    }, 5000);
    expect(ok.body.length).toBeGreaterThan(0);

    // One log line when the burst started and one when it was locked out — not one per failure.
    const logged = lines.filter((l) => /^authentication fail/.test(l.msg));
    expect(logged.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^authentication failed: wrong admin token/),
      expect.stringMatching(/^authentication failures: client locked out/),
    ]);
    expect(logged[1]).toMatchObject({ client: '127.0.0.1', surface: 'admin-api', failures: 3, lockoutSeconds: 1 });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/hcm_runner_auth_failures_total\{surface="admin-api",reason="wrong_token"\} 3\n/);
    // Refused unchecked: the two above and the polls that waited out the lockout.
    const lockedOut = /hcm_runner_auth_failures_total\{surface="admin-api",reason="locked_out"\} (\d+)\n/.exec(metrics);
    expect(Number(lockedOut?.[1])).toBeGreaterThanOrEqual(2);
  });

  it('wrong sign-ins: the same, on the sign-in form', async () => {
    const { s, lines } = await throttled();
    for (let i = 0; i < 3; i++) expect((await signIn(s.url, `token=wrong-${i}`)).status).toBe(401);
    const locked = await signIn(s.url, `token=${ADMIN}`);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('1');
    expect(await locked.text()).toMatch(/too many wrong admin tokens/);
    // The admin API shares the table: the same client is locked out there too.
    expect((await s.api('GET', '/integrations')).status).toBe(429);
    await poll(async () => ((await signIn(s.url, `token=${ADMIN}`)).status === 303 ? true : undefined), 5000);
    expect(lines.filter((l) => /^authentication fail/.test(l.msg))).toHaveLength(2);
    expect(await (await fetch(`${s.url}/metrics`)).text()).toMatch(/hcm_runner_auth_failures_total\{surface="sign-in",reason="wrong_token"\} 3\n/);
  });
});

describe('console sessions', () => {
  const settings = { dir: join(fixtures, 'main'), port: 0, adminToken: ADMIN, logLevel: 'silent', retentionDays: 0, env: { ...process.env } };

  it('a signed-out cookie stays dead after a restart (SQLite); one still signed in survives it', async () => {
    const data = tempDir();
    cleanups.push(data.remove);
    let s: RunningServer = await startServer({ ...settings, dataDir: data.path });
    cleanups.push(() => s.close(0));
    const out = await sessionCookie(s.url);
    const kept = await sessionCookie(s.url);
    expect(await consoleStatus(s.url, out)).toBe(200);
    const signOut = await fetch(`${s.url}/console/sign-out`, {
      method: 'POST',
      headers: { cookie: out, 'sec-fetch-site': 'same-origin', 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
    expect(signOut.status).toBe(303);
    expect(await consoleStatus(s.url, out)).toBe(303);

    await s.close(0);
    s = await startServer({ ...settings, dataDir: data.path });
    expect(await consoleStatus(s.url, out)).toBe(303);
    expect(await consoleStatus(s.url, kept)).toBe(200);
  });

  it('DELETE /api/console-sessions signs every session out', async () => {
    const s = await server();
    const cookies = [await sessionCookie(s.url), await sessionCookie(s.url)];
    for (const c of cookies) expect(await consoleStatus(s.url, c)).toBe(200);
    expect((await s.api('DELETE', '/console-sessions', undefined, null)).status).toBe(401);
    const r = await s.api('DELETE', '/console-sessions');
    expect(r).toMatchObject({ status: 200, body: { signedOut: 2 } });
    for (const c of cookies) expect(await consoleStatus(s.url, c)).toBe(303);
  });

  it('a session lasts HCM_RUNNER_CONSOLE_SESSION_SECONDS', async () => {
    const s = await server({ env: { HCM_RUNNER_CONSOLE_SESSION_SECONDS: '1' } });
    const cookie = await sessionCookie(s.url);
    expect(await consoleStatus(s.url, cookie)).toBe(200);
    await poll(async () => ((await consoleStatus(s.url, cookie)) === 303 ? true : undefined), 5000);
  });
});

describe('the console: hono csrf and secureHeaders', () => {
  it('refuses cross-site and foreign-origin form posts with the 403 page; its pages carry the security headers', async () => {
    const s = await server();
    for (const headers of <Array<Record<string, string>>>[
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://evil.example' },
      {},
    ]) {
      const res = await fetch(`${s.url}/console/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: `token=${ADMIN}`,
        redirect: 'manual',
      });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.text()).toMatch(/cross-site request protection/);
    }
    // The console's own origin (no Sec-Fetch-Site: an older browser) passes.
    const own = await fetch(`${s.url}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: `token=${ADMIN}`,
      redirect: 'manual',
    });
    expect(own.status).toBe(303);

    const page = await fetch(`${s.url}/console/sign-in`);
    expect(Object.fromEntries(page.headers)).toMatchObject({
      'content-security-policy':
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
    });
    expect(page.headers.get('strict-transport-security')).toBeNull();
  });
});

describe('weak admin tokens', () => {
  it('refuses to start under NODE_ENV=production, saying how to generate a token', { timeout: 30_000 }, async () => {
    const data = tempDir();
    cleanups.push(data.remove);
    const p = spawnServe(['--dir', join(fixtures, 'main'), '--port', '0', '--data', data.path], {
      HCM_RUNNER_ADMIN_TOKEN: 'a',
      NODE_ENV: 'production',
    });
    const code = await new Promise<number | null>((r) => p.child.once('exit', r));
    expect(code).toBe(1);
    expect(p.output()).toMatch(
      /admin token in HCM_RUNNER_ADMIN_TOKEN is weak: at most 4 bits, at least 128 .*openssl rand -hex 32.*NODE_ENV=production/,
    );
  });

  it('starts with a warning otherwise; a strong token starts without one', { timeout: 30_000 }, async () => {
    const data = tempDir();
    cleanups.push(data.remove);
    const args = ['--dir', join(fixtures, 'main'), '--port', '0', '--data', data.path];
    const weak = spawnServe(args, { HCM_RUNNER_ADMIN_TOKEN: 'password123', NODE_ENV: 'development' });
    cleanups.push(() => weak.child.kill('SIGTERM'));
    await poll(async () => (/listening on/.test(weak.output()) ? true : undefined), 20_000);
    expect(weak.output()).toMatch(/admin token in HCM_RUNNER_ADMIN_TOKEN is weak.*openssl rand -hex 32/);

    const strong = spawnServe(args.slice(0, 4).concat('--data', join(data.path, 'b')), {
      HCM_RUNNER_ADMIN_TOKEN: 'c0ffee'.repeat(6),
      NODE_ENV: 'production',
    });
    cleanups.push(() => strong.child.kill('SIGTERM'));
    await poll(async () => (/listening on/.test(strong.output()) ? true : undefined), 20_000);
    expect(strong.output()).not.toMatch(/weak/);
  });
});
