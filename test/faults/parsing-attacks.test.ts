/**
 * Parsing attacks against a real `hcm-runner serve` (child process), each of which hurt the
 * runner before: 60,000 multipart parts with one name (quadratic: 40 s, /healthz frozen), JSON
 * nested 5,000 deep (500 "Maximum call stack size exceeded"), fields named `constructor` or
 * `__proto__` (`[null, "y"]`, or dropped), credential headers other than Authorization stored in
 * clear, and integration files that blocked loading for seconds (50 MB, 10,000 steps, quadratic
 * duplicate-key checks, alias bombs). Liveness is checked the only way tests may check time:
 * /healthz must keep answering within a generous bound while an attack runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, cli, repoRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';
import { poll, tempDir } from '../server/helpers.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'parsing');
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;
const MAX_PARTS = 1500;
/** Generous: a healthy runner answers in milliseconds; a blocked one did not for 10–40 s. */
const LIVENESS_MS = 2000;

const dir = tempDir('hcm-parsing-dir-');
const data = tempDir('hcm-parsing-data-');
let child: ChildProcess;
let base: string;
let logs = '';
const urls: Record<string, string> = {};

beforeAll(async () => {
  cpSync(fixtures, dir.path, { recursive: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(
    process.execPath,
    [
      bin,
      'serve',
      '--dir',
      dir.path,
      '--port',
      String(port),
      '--data',
      data.path,
      '--max-form-parts',
      String(MAX_PARTS),
      '--redact-headers',
      'X-Tenant-Secret, x-other-secret',
    ],
    { cwd: repoRoot, env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN, HCM_RUNNER_LOG_LEVEL: 'debug' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (c) => (logs += c));
  child.stderr!.on('data', (c) => (logs += c));
  await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100);
  for (const i of await api('/integrations')) urls[i.name] = i.webhookUrls?.live;
  expect(urls.echo, JSON.stringify(await api('/integrations'))).toMatch(/\/webhooks\//);
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
  }
  dir.remove();
  data.remove();
});

async function api(path: string, method = 'GET'): Promise<any> {
  const res = await fetch(`${base}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  return res.json();
}

/**
 * Runs `attack` while /healthz is asked every 100 ms; every answer must come within LIVENESS_MS.
 * Returns the attack's result once both are done.
 */
async function whileHealthy<T>(attack: () => Promise<T>): Promise<T> {
  let done = false;
  let checks = 0;
  let failure: Error | undefined;
  const watcher = (async () => {
    while (!done) {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(LIVENESS_MS) }).catch((err: Error) => {
        throw new Error(`/healthz did not answer within ${LIVENESS_MS} ms during the attack (${err.message})`);
      });
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status} during the attack`);
      checks++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })().catch((err: Error) => {
    failure = err;
  });
  let result: T;
  try {
    result = await attack();
  } finally {
    done = true;
    await watcher;
  }
  if (failure) throw failure;
  expect(checks).toBeGreaterThan(0);
  return result;
}

async function post(url: string, body: string | Buffer, contentType: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

function multipart(parts: Array<{ name: string; value: string; type?: string }>, boundary = 'XyZb0und'): { body: Buffer; type: string } {
  const chunks = parts.map(
    (p) => `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n${p.value}\r\n`,
  );
  return { body: Buffer.from(`${chunks.join('')}--${boundary}--\r\n`), type: `multipart/form-data; boundary=${boundary}` };
}

const repeated = (n: number) => multipart(Array.from({ length: n }, () => ({ name: 'f', value: 'x' })));

describe('multipart and form bodies', () => {
  it('60,000 parts with one name are refused with 413 at once; /healthz answers throughout', async () => {
    const { body, type } = repeated(60_000);
    expect(body.length).toBeGreaterThan(3_000_000);
    const res = await whileHealthy(() => post(urls.echo!, body, type));
    expect(res.status).toBe(413);
    expect(res.json.error).toMatch(new RegExp(`more than ${MAX_PARTS} parts`));
    expect(res.json.error).toContain('--max-form-parts');
  });

  it('6 MB of form fields (3 million) are refused with 413 before parsing; so is one field past the limit', async () => {
    const res = await whileHealthy(() => post(urls.echo!, 'a&'.repeat(3_000_000), 'application/x-www-form-urlencoded'));
    expect(res.status).toBe(413);
    expect(res.json.error).toMatch(new RegExp(`^form body has more than ${MAX_PARTS} fields`));
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `f=${i}`).join('&');
    expect((await post(urls.echo!, fields(MAX_PARTS + 1), 'application/x-www-form-urlencoded')).status).toBe(413);
    const ok = await post(urls.echo!, fields(MAX_PARTS), 'application/x-www-form-urlencoded');
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.parts).toBe(MAX_PARTS);
  });

  it('up to the configured limit, a repeated name collects every part into one array', async () => {
    const { body, type } = repeated(MAX_PARTS);
    const res = await whileHealthy(() => post(urls.echo!, body, type));
    expect(res.status, res.text).toBe(200);
    expect(res.json.parts).toBe(MAX_PARTS);
    expect((await post(urls.echo!, repeated(MAX_PARTS + 1).body, type)).status).toBe(413);
  });
});

describe('deeply nested JSON', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('5,000 levels → 400 with a clear error, no execution', async () => {
    const before = (await api('/executions?integration=echo&limit=500')).length;
    const res = await post(urls.echo!, nested(5000), 'application/json');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/the request body nests arrays and objects more than 256 levels deep/);
    expect((await api('/executions?integration=echo&limit=500')).length).toBe(before);
  });

  it('the limit is 256 levels; brackets inside strings do not count', async () => {
    expect((await post(urls.echo!, nested(256), 'application/json')).status).toBe(200);
    expect((await post(urls.echo!, nested(257), 'application/json')).status).toBe(400);
    const text = JSON.stringify({ note: '['.repeat(5000) + '{'.repeat(5000) });
    expect((await post(urls.echo!, text, 'application/json')).status).toBe(200);
  });

  it('a JSON-typed multipart part is bounded too', async () => {
    const { body, type } = multipart([{ name: 'doc', value: nested(5000), type: 'application/json' }]);
    const res = await post(urls.echo!, body, type);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/multipart part "doc" nests arrays and objects more than 256 levels deep/);
  });
});

describe('names from the request are plain keys', () => {
  const entries = (o: unknown) => Object.entries(o as object);

  it('query parameters named constructor, __proto__, toString are values like any other', async () => {
    const res = await post(`${urls.echo}?constructor=y&__proto__=z&toString=1&a=1&a=2`, '', 'text/plain');
    expect(res.status, res.text).toBe(200);
    expect(entries(res.json.query)).toEqual([
      ['constructor', 'y'],
      ['__proto__', 'z'],
      ['toString', '1'],
      ['a', ['1', '2']],
    ]);
    // Expressions read them as usual.
    expect(res.json.ctor).toBe('y');
    expect(res.json.queryKeys).toEqual(['constructor', '__proto__', 'toString', 'a']);
  });

  it('form fields too', async () => {
    const res = await post(urls.echo!, 'constructor=1&__proto__=2&hasOwnProperty=3&constructor=4', 'application/x-www-form-urlencoded');
    expect(res.status, res.text).toBe(200);
    expect(entries(res.json.body)).toEqual([
      ['constructor', ['1', '4']],
      ['__proto__', '2'],
      ['hasOwnProperty', '3'],
    ]);
  });

  it('multipart part names too', async () => {
    const { body, type } = multipart([
      { name: 'constructor', value: 'a' },
      { name: '__proto__', value: 'b' },
      { name: 'valueOf', value: 'c' },
    ]);
    const res = await post(urls.echo!, body, type);
    expect(res.status, res.text).toBe(200);
    expect(res.json.bodyKeys).toEqual(['constructor', '__proto__', 'valueOf']);
    expect(res.json.body.constructor).toEqual({ data: 'a', contentType: 'text/plain' });
    expect(Object.getOwnPropertyDescriptor(res.json.body, '__proto__')?.value).toEqual({ data: 'b', contentType: 'text/plain' });
  });

  it('and header names', async () => {
    // (A header named __proto__ never gets this far: Node's own header object drops it.)
    const res = await post(urls.echo!, '{}', 'application/json', { constructor: 'h1', 'x-plain': 'h2' });
    expect(res.json.headers.constructor).toBe('h1');
    expect(res.json.headers['x-plain']).toBe('h2');
  });
});

describe('caller credentials are redacted before $trigger', () => {
  const secrets = {
    authorization: `Bearer ${randomBytes(8).toString('hex')}`,
    'proxy-authorization': `Basic ${randomBytes(8).toString('hex')}`,
    cookie: `session=${randomBytes(8).toString('hex')}`,
    'x-api-key': `key-${randomBytes(8).toString('hex')}`,
    'x-auth-token': `tok-${randomBytes(8).toString('hex')}`,
    'x-tenant-secret': `tenant-${randomBytes(8).toString('hex')}`, // added by --redact-headers
  };

  it('in $trigger.headers, in the stored record, in the data files and in the logs', async () => {
    const sync = await post(urls.echo!, '{}', 'application/json', { ...secrets, 'x-visible': 'kept' });
    expect(sync.status).toBe(200);
    for (const name of Object.keys(secrets)) expect(sync.json.headers[name], name).toBe('[redacted]');
    expect(sync.json.headers['x-visible']).toBe('kept');

    const accepted = await post(urls.record!, '{}', 'application/json', secrets);
    expect(accepted.status).toBe(200);
    const id = accepted.json.executionId as string;
    const record = await poll(async () => {
      const r = await api(`/executions/${id}`);
      return r.status === 'succeeded' ? r : undefined;
    }, 15_000);
    for (const name of Object.keys(secrets)) expect(record.trigger.headers[name], name).toBe('[redacted]');

    const stored = readdirSync(data.path)
      .map((f) => readFileSync(join(data.path, f)).toString('latin1'))
      .join('\n');
    for (const [name, value] of Object.entries(secrets)) {
      const token = value.split(/[ =]/).pop()!;
      expect(stored.includes(token), `${name} in the data files`).toBe(false);
      expect(logs.includes(token), `${name} in the logs`).toBe(false);
    }
  });
});

describe('integration files that used to block loading', () => {
  async function problemsOf(file: string): Promise<Array<{ line: number; column: number; message: string }>> {
    return poll(
      async () => {
        const list = (await api('/integrations')) as Array<{ file: string; errors?: any[] }>;
        return list.find((i) => i.file.endsWith(file) && i.errors?.length)?.errors;
      },
      20_000,
      100,
    );
  }

  it('a 50 MB file is refused without being read; the server keeps answering', async () => {
    const problems = await whileHealthy(async () => {
      writeFileSync(join(dir.path, 'huge.yaml'), `name: huge\ndescription: "${'x'.repeat(50 * 1024 * 1024)}"\n`);
      await api('/reload', 'POST');
      return problemsOf('huge.yaml');
    });
    expect(problems).toEqual([
      expect.objectContaining({
        line: 1,
        column: 1,
        message: expect.stringMatching(
          /^the file is 52,428,8\d\d bytes; integration files may be at most 131,072 bytes \(128 KiB, HCM_RUNNER_MAX_FILE_BYTES\)/,
        ),
      }),
    ]);
  });

  it('thousands of steps are refused at the first step past 500, with its line and column', async () => {
    // 2,000 steps in this form are about 110 KB: under the size limit.
    const steps = Array.from({ length: 2000 }, (_, i) => `  - {id: s${i}, action: core.log, inputs: {message: m}}`).join('\n');
    const problems = await whileHealthy(async () => {
      writeFileSync(join(dir.path, 'many-steps.yaml'), `name: many-steps\ntrigger: {type: webhook}\nsteps:\n${steps}\n`);
      await api('/reload', 'POST');
      return problemsOf('many-steps.yaml');
    });
    // Line 4 holds step 0, so step 500 (the first one past the limit) is on line 504.
    expect(problems).toEqual([
      expect.objectContaining({
        line: 504,
        column: 5,
        message: expect.stringMatching(/^steps has 2000 steps; at most 500 are allowed \(HCM_RUNNER_MAX_STEPS\)/),
      }),
    ]);
    const validate = cli(['validate', join(dir.path, 'many-steps.yaml')]);
    expect(validate.code).toBe(1);
    expect(validate.stdout + validate.stderr).toMatch(/many-steps\.yaml:504:5: error: steps has 2000 steps; at most 500 are allowed/);
  });

  it('a mapping of 11,000 keys is checked for duplicates in linear time', async () => {
    const keys = Array.from({ length: 11_000 }, (_, i) => `x-k${i}: 1`).join('\n');
    const problems = await whileHealthy(async () => {
      writeFileSync(
        join(dir.path, 'keys.yaml'),
        `name: keys\ntrigger: {type: webhook}\nsteps:\n  - {id: a, action: core.log, inputs: {message: m}}\n${keys}\nx-k7: 2\n`,
      );
      await api('/reload', 'POST');
      return problemsOf('keys.yaml');
    });
    expect(problems).toEqual([
      expect.objectContaining({ line: 11_005, column: 1, message: 'duplicate key: each key may appear only once in a mapping' }),
    ]);
  });

  it('an alias bomb (20,000 values aliased 999 times) is refused at its first alias', async () => {
    const items = Array.from({ length: 20_000 }, () => '1').join(',');
    const aliases = Array.from({ length: 999 }, () => '*a').join(',');
    const problems = await whileHealthy(async () => {
      writeFileSync(
        join(dir.path, 'bomb.yaml'),
        `name: bomb\ntrigger: {type: webhook}\nx-a: &a [${items}]\nsteps:\n  - id: a\n    action: core.transform\n    inputs:\n      value: [${aliases}]\n`,
      );
      await api('/reload', 'POST');
      return problemsOf('bomb.yaml');
    });
    expect(problems).toEqual([
      expect.objectContaining({ line: 8, column: 15, message: expect.stringMatching(/^aliases expand this file to more than 1,000,000 values/) }),
    ]);
  });
});
