/**
 * Live feeds as server-sent events: execution state changes (`GET /api/events`) and listening-mode
 * captures (`GET /api/integrations/{name}/captures/stream`). The console's pages use the same
 * streams. Events are what this process sees: executions queued, started or finished here.
 */
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { ExecutionEvent, Runtime } from '../runtime/runtime.js';
import type { CaptureSummary } from '../store/types.js';
import { HttpError } from '../common/errors.js';

/** Open streams per process above which a new one is refused with 503 (each holds a connection). */
export const MAX_STREAMS = 100;
/**
 * Bytes of events one stream may hold for a reader that does not keep up (a stalled tab, a client
 * that never reads) before the stream is ended: past it the events would pile up in memory
 * without bound. A browser's EventSource reconnects by itself, and the console reloads what it
 * shows from the API. One event larger than this still goes out when nothing else is waiting.
 */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/** Open streams of each runtime (tests run several servers in one process). */
const openStreams = new WeakMap<Runtime, number>();

/** `event: execution`, data `{id, integration, status, test, attempt, at}`. */
export function executionStream(runtime: Runtime, c: Context, integration?: string): Response {
  return stream(runtime, c, (send) => {
    const listener = (e: ExecutionEvent) => {
      if (!integration || e.integration === integration) send('execution', e);
    };
    runtime.on('execution', listener);
    return () => runtime.off('execution', listener);
  });
}

/**
 * `event: capture`, data the capture's summary `{id, integration, receivedAt, size, truncated,
 * method, path, contentType, preview}` (as GET …/captures?summary=true): never its body, so a
 * large request costs a stream a few hundred bytes (GET …/captures/{id} has the capture).
 */
export function captureStream(runtime: Runtime, c: Context, integration: string): Response {
  return stream(runtime, c, (send) => {
    const listener = (capture: CaptureSummary) => {
      if (capture.integration === integration) send('capture', capture);
    };
    runtime.on('capture', listener);
    return () => runtime.off('capture', listener);
  });
}

/**
 * Opens the stream with an `event: ready` (so a client knows it is subscribed), forwards what
 * `subscribe` sends, and ends on client disconnect or server shutdown.
 */
function stream(runtime: Runtime, c: Context, subscribe: (send: (event: string, data: unknown) => void) => () => void): Response {
  const open = openStreams.get(runtime) ?? 0;
  if (open >= MAX_STREAMS)
    throw new HttpError(503, `too many open event streams (limit ${MAX_STREAMS}); close some console tabs or retry later`, { 'retry-after': '5' });
  openStreams.set(runtime, open + 1);
  const response = streamSSE(c, async (sse: SSEStreamingApi) => {
    let finish!: () => void;
    const ended = new Promise<void>((r) => (finish = r));
    // Writes are chained so events keep their order even when the client reads slowly; what the
    // chain holds is counted, and a reader too far behind is let go (MAX_PENDING_BYTES).
    let chain = Promise.resolve();
    let pending = 0;
    const write = (bytes: number, w: () => Promise<unknown>) => {
      if (pending > 0 && pending + bytes > MAX_PENDING_BYTES) return finish();
      pending += bytes;
      chain = chain.then(w).then(
        () => void (pending -= bytes),
        () => finish(),
      );
    };
    const unsubscribe = subscribe((event, data) => {
      const text = JSON.stringify(data);
      write(text.length, () => sse.writeSSE({ event, data: text }));
    });
    const heartbeat = setInterval(() => write(10, () => sse.write(': ping\n\n')), HEARTBEAT_MS);
    heartbeat.unref();
    runtime.once('stopping', finish);
    sse.onAbort(finish);
    try {
      write(2, () => sse.writeSSE({ event: 'ready', data: '{}' }));
      await ended;
    } finally {
      openStreams.set(runtime, (openStreams.get(runtime) ?? 1) - 1);
      clearInterval(heartbeat);
      unsubscribe();
      runtime.off('stopping', finish);
    }
  });
  // The connection is not reused after a stream: when shutdown ends the stream, the socket closes
  // at once instead of idling until the keep-alive timeout and holding the server's close open.
  response.headers.set('connection', 'close');
  return response;
}
