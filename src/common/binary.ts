/**
 * The one shape binary data has everywhere: a webhook's file part, a binary HTTP response (an
 * invoice PDF), a file input. JSON-safe so it can sit in execution records and expressions.
 */
export interface BinaryValue {
  contentType: string;
  size: number;
  base64: string;
  filename?: string;
}

/**
 * `size` may be missing when a value is built in an expression (`{'contentType': …, 'base64': …}`):
 * the bytes say how many there are, so only `contentType` and `base64` are required — the same
 * rule as the inputs' JSON Schema (definition/action-schema.ts).
 */
export function isBinaryValue(value: unknown): value is BinaryValue {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.base64 === 'string' && typeof v.contentType === 'string' && (v.size === undefined || typeof v.size === 'number');
}

export function binaryFromBytes(bytes: Uint8Array, contentType: string, filename?: string): BinaryValue {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const value: BinaryValue = { contentType, size: buf.byteLength, base64: buf.toString('base64') };
  if (filename !== undefined) value.filename = filename;
  return value;
}

/** A file input accepts the binary shape or a plain string (its UTF-8 bytes). */
export function bytesOf(value: BinaryValue | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value.base64, 'base64');
}
