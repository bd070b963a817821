/**
 * A body past `maxBodyBytes` is answered 413 with `Connection: close`, and the runner reads on
 * (discarding, within bounds) before closing, so a client still writing its body reads the 413
 * instead of failing with EPIPE. The client is Node's own fetch (undici) in a child process: in the
 * same process the server reads as fast as the client writes and the race never shows.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

/** Sends `tries` bodies of `size` bytes with fetch from another process; counts 413s and errors. */
async function sendFromChild(url: string, size: number, tries: number, stream: boolean): Promise<{ status413: number; other: string[] }> {
  const script = `
    const [url, size, tries, stream] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), process.argv[4] === '1'];
    let status413 = 0; const other = [];
    for (let i = 0; i < tries; i++) {
      try {
        let body = 'x'.repeat(size);
        if (stream) {
          const chunk = new Uint8Array(65536).fill(120); let sent = 0;
          body = new ReadableStream({ pull(c) { if (sent >= size) return c.close(); sent += chunk.length; c.enqueue(chunk); } });
        }
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' });
        const text = await res.text();
        if (res.status === 413 && res.headers.get('connection') === 'close' && JSON.parse(text).error.includes('maxBodyBytes')) status413++;
        else other.push(res.status + ' ' + res.headers.get('connection'));
      } catch (err) { other.push(String(err.cause?.code ?? err.cause ?? err)); }
    }
    console.log(JSON.stringify({ status413, other }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, url, String(size), String(tries), stream ? '1' : '0'], {
    timeout: 120_000,
  });
  return JSON.parse(stdout);
}

describe('413 past maxBodyBytes, sent by undici fetch', () => {
  it('a declared 7 MiB body to a 100-byte webhook: 413 with Connection: close in 30 of 30 tries, never EPIPE', async () => {
    expect(await sendFromChild(s.urls('strict').live, 7 * 1024 * 1024, 30, false)).toEqual({ status413: 30, other: [] });
  });

  it('a streamed (chunked) 4 MiB body, counted while reading: 413 in 30 of 30 tries', async () => {
    expect(await sendFromChild(s.urls('strict').live, 4 * 1024 * 1024, 30, true)).toEqual({ status413: 30, other: [] });
  });

  it('the connection is still answered correctly for bodies within the limit', async () => {
    const res = await fetch(s.urls('strict').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":1}' });
    expect(res.status).toBe(200);
  });
});
