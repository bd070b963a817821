/**
 * Reads a request body up to a limit. On Node we read the IncomingMessage directly (no web-stream
 * wrapping on the hot path); the size is checked while streaming, so a lying or absent
 * Content-Length cannot push more than the limit into memory.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../common/errors.js';
import { bodyTooLarge } from '../triggers/webhook/intake.js';

export async function readBody(incoming: IncomingMessage | undefined, fallback: Request, limit: number): Promise<Buffer> {
  if (!incoming) {
    const buf = Buffer.from(await fallback.arrayBuffer());
    if (buf.length > limit) throw bodyTooLarge(limit);
    return buf;
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop buffering; node-server drains or closes the rest after the 413 went out.
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new HttpError(400, `request body could not be read: ${err.message}`));
    };
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    if (incoming.readableEnded) return resolve(Buffer.alloc(0));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}

/**
 * How much of an unread request body is still read (and discarded) after an answer that closes
 * the connection, such as the 413 of a body past `maxBodyBytes`. Closing a socket that still has
 * unread bytes makes the kernel send a reset instead of a normal close, and a client still
 * writing its body (Node's own fetch, undici) then sees `EPIPE` instead of the answer waiting in
 * its receive buffer. Reading on for a bounded amount lets it finish writing and read the answer;
 * the bounds keep a sender of an endless body from holding the connection.
 */
export const LINGER_MAX_BYTES = 8 * 1024 * 1024;
export const LINGER_MAX_MS = 1000;

/**
 * Reads and discards the rest of a request body until it ends, the client goes away, or the
 * bounds above are reached (then the caller closes the connection anyway). Resolves, never rejects.
 */
export function discardRest(incoming: IncomingMessage, maxBytes = LINGER_MAX_BYTES, maxMs = LINGER_MAX_MS): Promise<void> {
  if (incoming.readableEnded || incoming.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', done);
      incoming.off('close', done);
      incoming.off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    incoming.on('data', onData);
    incoming.on('end', done);
    incoming.on('close', done);
    incoming.on('error', done);
    incoming.resume();
  });
}
