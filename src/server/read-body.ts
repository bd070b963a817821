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
