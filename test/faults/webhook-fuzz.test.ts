/**
 * Property-based fuzzing of webhook intake over a raw TCP socket (so any method, header and body
 * byte can be sent): random methods, headers (some ~64 KiB), content types, malformed JSON and
 * multipart, random bytes, random paths after the token. The server must never crash, must
 * answer every request, must keep answering /healthz, and must not answer 5xx — except the
 * 500 of a sync webhook whose step failed (with the step named and the execution id).
 *
 * Then model-based properties of the parsers: random query strings, form bodies, multipart bodies
 * (up to and past the part limit) and nested JSON (up to and past the depth limit) must come out
 * in `$trigger` exactly as a simple model of the mapping says — names like `constructor` and
 * `__proto__` included — or be refused with the right 4xx.
 */
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/helpers.js';

const here = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fuzz');
/** Small, so generated multipart bodies cross it. */
const MAX_PARTS = 30;
let s: TestServer;
let host: string;
let port: number;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer({
    dir: here,
    env: { FUZZ_SIGNING_SECRET: 'fuzz-signing-secret' },
    limits: { backlog: 100_000 },
    maxFormParts: MAX_PARTS,
  });
  const u = new URL(s.url);
  host = u.hostname;
  port = Number(u.port);
  for (const name of ['echo', 'strict', 'sync-echo', 'sync-fail', 'hmac', 'computed'])
    tokens[name] = new URL(s.urls(name).live).pathname.split('/').pop()!;
});
afterAll(async () => {
  await s?.stop();
});

interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/** Sends raw bytes, reads until the server closes (Connection: close), parses the status line. */
function rawRequest(bytes: Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP status line in the answer: ${JSON.stringify(text.slice(0, 200))}`));
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(m[1]), head: text.slice(0, split), body: split < 0 ? '' : text.slice(split + 4) });
    };
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', done);
    // The server may close while we still write (e.g. 431, 413): the answer was read already.
    sock.on('error', (err) => {
      if (chunks.length) return done();
      clearTimeout(timer);
      reject(err);
    });
    // No half-close: Node's HTTP server drops the answer to a client that sent FIN early.
    sock.write(bytes);
  });
}

/** Body of a chunked or plain answer (enough for JSON checks). */
function decodeBody(r: RawResponse): string {
  if (!/transfer-encoding:\s*chunked/i.test(r.head)) return r.body;
  let out = '';
  let rest = r.body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size || nl < 0) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/).filter((h) => !/^(host|content-length|transfer-encoding|connection)$/i.test(h));
const headerValue = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...'abcdefXYZ0123456789 ;=,/-_.:"\'%'.split('')), maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(64 * 1024)) }, // ~64 KiB: 431 (or 400), never a crash
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b).toString('latin1')) }, // control bytes
);
const contentType = fc.option(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=klingon',
    'text/plain',
    'text/plain; charset=latin1',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'application/xml',
    'multipart/form-data; boundary=XyZ',
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/mixed; boundary=XyZ',
    'garbage',
    ';;;',
    'a/b; c=d; e',
  ),
  { nil: undefined },
);
const multipart = fc
  .record({
    name: fc.string({ maxLength: 10 }),
    value: fc.string({ maxLength: 40 }),
    ct: fc.constantFrom('', 'Content-Type: application/json\r\n', 'Content-Type: application/octet-stream\r\n'),
    truncate: fc.boolean(),
  })
  .map(({ name, value, ct, truncate }) => {
    const full = `--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n${ct}\r\n${value}\r\n--XyZ--\r\n`;
    return Buffer.from(truncate ? full.slice(0, Math.floor(full.length / 2)) : full);
  });
const body = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  fc.json().map((j) => Buffer.from(j)),
  fc.string({ maxLength: 80 }).map((t) => Buffer.from(`{"broken": ${t}`)), // malformed JSON
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from('{"quantity": 3}')),
  fc.constant(Buffer.from('{"quantity": -1}')),
  fc.constant(Buffer.from('a=1&a=2&b=%ZZ')),
  fc.constant(Buffer.alloc(150, 'x')), // above `strict`'s maxBodyBytes
  multipart,
);
const method = fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'), fc.stringMatching(/^[A-Z]{1,8}$/));
const segment = fc.oneof(fc.webSegment(), fc.constantFrom('%', '%E0%A4%A', '..', '%2F', '%00', 'ü', '?', '??a=b&a=c', '?x=%ZZ', '#frag', '//'));
const target = fc.record({
  name: fc.constantFrom(...['echo', 'strict', 'sync-echo', 'sync-fail', 'hmac', 'computed', 'unknown']),
  test: fc.boolean(),
  rest: fc.array(segment, { maxLength: 3 }),
});

const request = fc.record({
  method,
  target,
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 5 }),
  contentType,
  body,
  chunked: fc.boolean(),
});

type Req = typeof request extends fc.Arbitrary<infer T> ? T : never;

function serialize(r: Req): Buffer {
  const token = r.target.name === 'unknown' ? 'no-such-token' : tokens[r.target.name]!;
  const path = `/webhooks/${r.target.test ? 'test/' : ''}${token}${r.target.rest.map((x) => `/${x}`).join('')}`.replace(/[ \r\n]/g, '%20');
  const lines = [`${r.method} ${path} HTTP/1.1`, `Host: ${host}:${port}`, 'Connection: close'];
  for (const [k, v] of r.headers) lines.push(`${k}: ${v.replace(/[\r\n]/g, ' ')}`);
  if (r.contentType !== undefined) lines.push(`Content-Type: ${r.contentType}`);
  let payload = r.body;
  if (r.chunked) {
    lines.push('Transfer-Encoding: chunked');
    payload = Buffer.concat([
      Buffer.from(r.body.length ? `${r.body.length.toString(16)}\r\n` : ''),
      r.body,
      Buffer.from(r.body.length ? '\r\n0\r\n\r\n' : '0\r\n\r\n'),
    ]);
  } else {
    lines.push(`Content-Length: ${r.body.length}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

describe('webhook intake under random requests', () => {
  it('never crashes, always answers, no 5xx except a failing sync step', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await rawRequest(serialize(r));
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        const huge = r.headers.some(([, v]) => v.length > 16 * 1024);
        if (huge) expect([400, 431]).toContain(res.status);
        if (res.status >= 500) {
          // Only a sync webhook whose step failed may answer 500, naming the step.
          expect(res.status).toBe(500);
          const parsed = JSON.parse(decodeBody(res)) as { error: string; executionId?: string };
          expect(parsed.executionId).toMatch(/^[0-9a-f-]{36}$/);
          expect(parsed.error).toMatch(/step \w+/);
        }
      }),
      { numRuns: 200, seed: 20251122, endOnFailure: true },
    );
    // Still serving.
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ok = await fetch(s.urls('sync-echo').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(ok.status).toBe(200);
    // Every class of answer showed up at least once (the generator reaches the interesting paths).
    const statuses = [...seen.keys()];
    for (const expected of [200, 400, 401, 404, 405, 413, 431, 500]) expect(statuses).toContain(expected);
  });

  it('a ~64 KiB header is refused with 431 and the server keeps serving', async () => {
    const res = await rawRequest(
      Buffer.from(
        `POST /webhooks/${tokens.echo} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'y'.repeat(64 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`,
      ),
    );
    expect(res.status).toBe(431);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  it('many malformed requests at once do not stall intake', async () => {
    const bad = Array.from({ length: 50 }, (_, i) =>
      rawRequest(
        Buffer.from(
          `POST /webhooks/${tokens.echo} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: ${i % 2 ? 'application/json' : 'multipart/form-data; boundary=b'}\r\nContent-Length: 9\r\n\r\n{"a": tru`,
        ),
      ),
    );
    const answers = await Promise.all(bad);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([400]));
    const good = await fetch(s.urls('echo').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(good.status).toBe(200);
  });
});

describe('intake parsers against a model', () => {
  /** Names that collide with Object.prototype, among ordinary ones. */
  const name = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'a', 'b', '') },
    { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const pairs = fc.array(fc.tuple(name, fc.string({ maxLength: 12 })), { maxLength: 12 });

  /** `[[k, v], …]` → `{k: v | [v, …]}` in first-seen order, as docs/authoring.md describes it. */
  function grouped<T>(list: Array<[string, T]>): Array<[string, T | T[]]> {
    const out = new Map<string, T | T[]>();
    const repeated = new Set<string>();
    for (const [k, v] of list) {
      if (!out.has(k)) out.set(k, v);
      else if (repeated.has(k)) (out.get(k) as T[]).push(v);
      else {
        out.set(k, [out.get(k) as T, v]);
        repeated.add(k);
      }
    }
    return [...out];
  }

  /** Posts to the async `echo` webhook and reads `$trigger` back from the stored record. */
  async function stored(query: string, body: Buffer | string, contentType: string): Promise<{ status: number; trigger?: any; error?: string }> {
    const res = await fetch(`${s.urls('echo').live}${query}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const answer = (await res.json()) as { executionId?: string; error?: string };
    if (res.status !== 200) return { status: res.status, error: answer.error };
    const record = await s.api('GET', `/executions/${answer.executionId}`);
    return { status: 200, trigger: record.body.trigger };
  }

  /** Own entries sorted by name (JS lists integer-like keys first, whatever the arrival order). */
  const own = (o: unknown) => sortedEntries(Object.entries(o as object));
  const sortedEntries = <T>(e: Array<[string, T]>) => [...e].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

  it('query strings', async () => {
    await fc.assert(
      fc.asyncProperty(pairs, async (list) => {
        const query = new URLSearchParams(list).toString();
        const r = await stored(query ? `?${query}` : '', '', 'text/plain');
        expect(r.status).toBe(200);
        expect(own(r.trigger.queryParameters)).toEqual(sortedEntries(grouped(list)));
      }),
      { numRuns: 60, seed: 20261122 },
    );
  });

  it('form bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        pairs.filter((l) => l.length > 0),
        async (list) => {
          const r = await stored('', new URLSearchParams(list).toString(), 'application/x-www-form-urlencoded');
          expect(r.status).toBe(200);
          expect(own(r.trigger.body.data)).toEqual(sortedEntries(grouped(list)));
        },
      ),
      { numRuns: 60, seed: 20261123 },
    );
  });

  const partName = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('constructor', '__proto__', 'toString', 'f', 'g') },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9 _.-]{1,10}$/) },
  );
  const part = fc.oneof(
    fc.record({ kind: fc.constant('text' as const), name: partName, text: fc.string({ maxLength: 20 }) }),
    fc.record({ kind: fc.constant('json' as const), name: partName, json: fc.json({ depthSize: 'small' }) }),
    fc.record({
      kind: fc.constant('file' as const),
      name: partName,
      bytes: fc.uint8Array({ maxLength: 40 }),
      filename: fc.stringMatching(/^[a-z0-9]{1,8}\.bin$/),
    }),
  );

  it('multipart bodies, up to and past the part limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: MAX_PARTS + 8 }), async (parts) => {
        const boundary = `fuzz${'b'.repeat(20)}${parts.length}`;
        const chunks: Buffer[] = [];
        const model: Array<[string, unknown]> = [];
        for (const p of parts) {
          let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
          let data: Buffer;
          if (p.kind === 'text') {
            data = Buffer.from(p.text);
            head += '\r\n';
            model.push([p.name, { data: p.text, contentType: 'text/plain' }]);
          } else if (p.kind === 'json') {
            data = Buffer.from(p.json);
            head += '\r\nContent-Type: application/json\r\n';
            model.push([p.name, { data: JSON.parse(JSON.stringify(JSON.parse(p.json))), contentType: 'application/json' }]);
          } else {
            data = Buffer.from(p.bytes);
            head += `; filename="${p.filename}"\r\nContent-Type: application/octet-stream\r\n`;
            model.push([
              p.name,
              { contentType: 'application/octet-stream', size: data.length, base64: data.toString('base64'), filename: p.filename },
            ]);
          }
          chunks.push(Buffer.from(`${head}\r\n`), data, Buffer.from('\r\n'));
        }
        chunks.push(Buffer.from(`--${boundary}--\r\n`));
        const r = await stored('', Buffer.concat(chunks), `multipart/form-data; boundary=${boundary}`);
        if (parts.length > MAX_PARTS) {
          expect(r.status).toBe(413);
          expect(r.error).toMatch(new RegExp(`more than ${MAX_PARTS} parts`));
          return;
        }
        expect(r.status, r.error).toBe(200);
        if (parts.length === 0) return; // no parts at all: an empty body.data
        const got = own(r.trigger.body.data);
        const want = sortedEntries(grouped(model));
        expect(got.map(([k]) => k)).toEqual(want.map(([k]) => k));
        for (const [k, v] of want) expect(Object.getOwnPropertyDescriptor(r.trigger.body.data, k)?.value, k).toMatchObject(v as object);
      }),
      { numRuns: 60, seed: 20261124 },
    );
  });

  it('nested JSON, up to and past the depth limit', async () => {
    const nested = fc.record({
      depth: fc.integer({ min: 1, max: 300 }),
      note: fc.string({ maxLength: 10 }),
      shape: fc.array(fc.boolean(), { minLength: 300, maxLength: 300 }),
    });
    await fc.assert(
      fc.asyncProperty(nested, async ({ depth, note, shape }) => {
        // Arrays and objects mixed; the note (which may hold brackets) sits at the bottom.
        let value: unknown = `${note}[{`;
        for (let i = 0; i < depth; i++) value = shape[i] ? [value] : { k: value };
        const r = await stored('', JSON.stringify(value), 'application/json');
        if (depth > 256) {
          expect(r.status).toBe(400);
          expect(r.error).toMatch(/more than 256 levels deep/);
        } else {
          expect(r.status, r.error).toBe(200);
          expect(r.trigger.body.data).toEqual(value);
        }
      }),
      { numRuns: 40, seed: 20261125 },
    );
  });

  it('the server is still serving after all of it', async () => {
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
