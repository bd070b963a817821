/**
 * The baseline: a bare Hono app on the same @hono/node-server, answering the webhook's JSON
 * request like the runner's async intake does — parse the JSON body, 200
 * `{"executionId": "<uuid>"}` with an `x-execution-id` header — and nothing else (no store).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { serveParent } from '../lib/proc.js';

const app = new Hono<{ Bindings: HttpBindings }>();
const answer = (c: Context) => {
  const id = randomUUID();
  return c.body(`{"executionId":"${id}"}`, 200, { 'content-type': 'application/json', 'x-execution-id': id });
};
// Idiomatic Hono: the body through the web Request (c.req.json()).
app.all('/webhooks/:token', async (c) => {
  await c.req.json();
  return answer(c);
});
// The cheapest way on Node: the body read from the IncomingMessage (as the runner's intake does).
app.all('/raw/:token', async (c) => {
  const chunks: Buffer[] = [];
  for await (const chunk of c.env.incoming) chunks.push(chunk as Buffer);
  JSON.parse(Buffer.concat(chunks).toString('utf8'));
  return answer(c);
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  serveParent(
    {
      url: `http://127.0.0.1:${info.port}`,
      webhookUrl: `http://127.0.0.1:${info.port}/webhooks/bare-token`,
      rawUrl: `http://127.0.0.1:${info.port}/raw/bare-token`,
    },
    {
      stop: () => {
        server.close(() => process.exit(0));
        (server as import('node:http').Server).closeAllConnections?.();
      },
    },
  );
});
