/** The built-in actions of docs/authoring.md, through the engine. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import { run } from '../helpers/engine.js';

const webhook = (steps: string) => `name: t\ntrigger: { type: webhook }\nsteps:\n${steps}`;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
let server: Server;
let base: string;
const seen: Seen[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url!.startsWith('/text')) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words');
      if (req.url!.startsWith('/bin')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([137, 80, 78, 71]));
      if (req.url!.startsWith('/missing')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"nope"}');
      res.writeHead(201, { 'content-type': 'application/json', 'x-id': '7' }).end(JSON.stringify({ id: 7 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('built-in actions', () => {
  it('core.splitString splits a path fragment', async () => {
    const r = await run(webhook(`  - id: s\n    action: core.splitString\n    inputs: { string: "a//b/c", separator: "/", removeEmpty: true }\n`));
    expect(r.result).toEqual(['a', 'b', 'c']);
  });

  it('core.respond sets the response and the run goes on', async () => {
    const r = await run(
      webhook(
        `  - id: r\n    action: core.respond\n    inputs: { statusCode: 201, contentType: text/plain, headers: { x-a: 1 }, body: made }\n  - id: after\n    action: core.transform\n    inputs: { value: 1 }\n`,
      ),
    );
    expect(r.response).toEqual({ statusCode: 201, contentType: 'text/plain', headers: { 'x-a': '1' }, body: 'made' });
    expect(r.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('core.log writes to the execution log with the step id', async () => {
    const r = await run(webhook(`  - id: l\n    action: core.log\n    inputs: { level: warn, message: "{% {'n': 1} %}" }\n`));
    expect(r.log).toContainEqual(expect.objectContaining({ level: 'warn', message: '{"n":1}', step: 'l' }));
    expect(r.steps[0]!.results).toEqual({ level: 'warn', message: '{"n":1}' });
  });

  it('a core.log step that ran exists for later steps, as every step that ran does', async () => {
    const r = await run(
      webhook(
        `  - id: l\n    action: core.log\n    inputs: { message: hi }\n  - id: seen\n    action: core.transform\n    inputs: { value: "{% [$exists($steps.l), $steps.l.message, $steps.l.level] %}" }\n`,
      ),
    );
    expect(r.result).toEqual([true, 'hi', 'info']);
  });

  it('core.stop ends the execution successfully and sets the sync answer', async () => {
    const r = await run(
      webhook(
        `  - id: s\n    action: core.stop\n    inputs: { statusCode: 202, body: { stopped: true } }\n  - id: never\n    action: core.fail\n    inputs: { message: unreachable }\n`,
      ),
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps.map((s) => s.id)).toEqual(['s']);
    expect(r.response).toEqual({ statusCode: 202, body: { stopped: true } });
  });

  it('core.http sends method, query (map or list), headers and a JSON body; returns status, headers, body', async () => {
    seen.length = 0;
    const r = await run(
      webhook(
        `  - id: h\n    action: core.http\n    inputs:\n      url: ${base}/hooks\n      method: POST\n      query: [{ key: a, value: "1" }, { key: a, value: "2" }]\n      headers: { x-token: abc }\n      data: "{% {'event': 'contact.changed'} %}"\n`,
      ),
    );
    expect(r.status).toBe('succeeded');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/hooks?a=1&a=2', body: '{"event":"contact.changed"}' });
    expect(seen[0]!.headers['x-token']).toBe('abc');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(r.result).toMatchObject({ status: 201, body: { id: 7 }, headers: { 'x-id': '7' } });
  });

  it('core.http sends a binary value built in an expression (no size) as its bytes', async () => {
    seen.length = 0;
    const r = await run(
      webhook(
        `  - id: h\n    action: core.http\n    inputs:\n      url: ${base}/upload\n      method: PUT\n      data: "{% {'contentType': 'text/plain', 'base64': 'aGk='} %}"\n`,
      ),
    );
    expect(r.status).toBe('succeeded');
    expect(seen[0]).toMatchObject({ method: 'PUT', body: 'hi' });
    expect(seen[0]!.headers['content-type']).toBe('text/plain');
  });

  it('core.http reads text and binary responses', async () => {
    const r = await run(
      webhook(
        `  - id: t\n    action: core.http\n    inputs: { url: ${base}/text, responseType: text }\n  - id: b\n    action: core.http\n    inputs: { url: ${base}/bin, responseType: binary }\n`,
      ),
    );
    expect(r.steps[0]!.results).toMatchObject({ body: 'plain words' });
    expect(r.steps[1]!.results).toMatchObject({
      body: { contentType: 'image/png', size: 4, base64: Buffer.from([137, 80, 78, 71]).toString('base64') },
    });
  });

  it('core.http fails on 4xx with the status, unless failOnError is false', async () => {
    const failing = await run(webhook(`  - id: h\n    action: core.http\n    inputs: { url: ${base}/missing }\n`));
    expect(failing.error).toMatchObject({ status: 404, remote: { error: 'nope' }, step: 'h' });
    const tolerant = await run(webhook(`  - id: h\n    action: core.http\n    inputs: { url: ${base}/missing, failOnError: false }\n`));
    expect(tolerant.result).toMatchObject({ status: 404 });
  });

  it('core.http rejects a relative URL at load time', () => {
    const { problems } = loadText('x.yaml', webhook(`  - id: h\n    action: core.http\n    inputs: { url: /relative }\n`));
    expect(problems).toEqual([
      expect.objectContaining({ line: 6, path: '/steps/0/inputs/url', message: expect.stringMatching(/input "url" of core.http/) }),
    ]);
  });
});
