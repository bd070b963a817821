/**
 * A step result above the limit (HCM_RUNNER_MAX_RESULT_BYTES, here 1 MiB) fails the step with a
 * clear error: the body is streamed and counted, the download is cut off at the limit (never
 * buffered whole), the execution ends `failed`, and the server keeps serving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/helpers.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'limits');
const LIMIT = 1024 * 1024;
const BODY = 64 * 1024 * 1024; // what the fake would send if nobody stopped reading
const CHUNK = Buffer.alloc(64 * 1024, 'x');

let s: TestServer;
let fake: Server;
/** Bytes the fake managed to write per request (it stops when the client closes the connection). */
const written: number[] = [];

beforeAll(async () => {
  fake = createServer((req, res) => {
    const mode = new URL(req.url!, 'http://x').searchParams.get('mode');
    if (mode === 'small') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
      return;
    }
    // `length`: declared up front; `chunked`: no Content-Length, so only counting can stop it;
    // `error`: an error answer with a chunked body (read to word the error, so counted too).
    res.writeHead(mode === 'error' ? 500 : 200, { 'content-type': 'text/plain', ...(mode === 'length' ? { 'content-length': String(BODY) } : {}) });
    let sent = 0;
    const i = written.push(0) - 1;
    const pump = () => {
      while (sent < BODY && !res.destroyed) {
        sent += CHUNK.length;
        written[i] = sent;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => undefined);
    pump();
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/big`;
  s = await startTestServer({ dir, allowPrivateNetwork: true, env: { BIG_URL: url, HCM_RUNNER_MAX_RESULT_BYTES: String(LIMIT) } });
});
afterAll(async () => {
  await s?.stop();
  fake?.closeAllConnections();
  await new Promise((r) => fake?.close(r));
});

async function run(mode: string): Promise<any> {
  const res = await fetch(`${s.urls('download').live}?mode=${mode}`, { method: 'POST' });
  expect(res.status).toBe(200);
  const { executionId } = (await res.json()) as { executionId: string };
  return s.waitForExecution(executionId);
}

describe('a response body above the step result limit', () => {
  it.each(['chunked', 'length', 'error'])('%s: the step fails naming the limit; the download is cut off, once', async (mode) => {
    const before = written.length;
    const r = await run(mode);
    expect(r.status).toBe('failed');
    expect(r.error.step).toBe('fetch');
    expect(r.error.code).toBe('result_too_large');
    expect(r.error.message).toMatch(
      /integration download, step fetch \(core\.http\): GET http:\/\/127\.0\.0\.1:\d+\/big: the response body is larger than the step result limit of 1048576 bytes/,
    );
    expect(r.error.message).toContain('HCM_RUNNER_MAX_RESULT_BYTES');
    expect(r.steps[0].attempts).toBe(1); // not retried: another attempt would be as large
    expect(written.length - before).toBe(1); // nor by core.http's own retries (maxRetryCount: 2 in the fixture)
    // Far less than the whole body went over the wire (socket buffers hold a few MB at most).
    expect(written[before]).toBeLessThan(BODY / 2);
  });

  it('a body under the limit is read as usual, and the server keeps serving', async () => {
    const r = await run('small');
    expect(r.status).toBe('succeeded');
    expect(r.result.body).toEqual({ ok: true });
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const ok = await fetch(s.urls('ok').live, { method: 'POST' });
    expect(ok.status).toBe(200);
  });
});
