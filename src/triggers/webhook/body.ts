/**
 * The body part of `$trigger` (PRODUCT §5 mapping table). Malformed JSON (a JSON body or a
 * JSON-typed multipart part) is a 400 for the caller and creates no execution.
 */
import { binaryFromBytes } from '../../common/binary.js';
import { decodeText, isJsonType, isTextType, isValidUtf8, parseContentType } from './content-type.js';
import { MultipartError, parseMultipart } from './multipart.js';
import { WebhookRejection } from './request.js';

export interface BodyParts {
  body?: { data: unknown; contentType: string };
  rawBody?: { data: string; contentType: string };
}

export function mapBody(rawBody: Buffer, contentTypeHeader: string | undefined): BodyParts {
  // No body at all (GET, DELETE, empty POST): neither body nor rawBody.
  if (rawBody.length === 0) return {};
  const contentType = contentTypeHeader ?? '';
  const { mediaType, params } = parseContentType(contentType);

  if (isJsonType(mediaType)) return { body: { data: parseJson(decodeText(rawBody, params.charset), 'the request body'), contentType } };

  if (mediaType === 'application/x-www-form-urlencoded') {
    return { body: { data: queryToObject(rawBody.toString('utf8')), contentType } };
  }

  if (mediaType === 'multipart/form-data') return { body: { data: mapMultipart(rawBody, params.boundary ?? ''), contentType } };

  if (isTextType(mediaType) || (mediaType === '' && isValidUtf8(rawBody))) {
    return { rawBody: { data: decodeText(rawBody, params.charset), contentType } };
  }

  // Binary: the file as body.data, and the bytes (base64) as rawBody too.
  const file = binaryFromBytes(rawBody, contentType || 'application/octet-stream');
  return { body: { data: file, contentType: file.contentType }, rawBody: { data: file.base64, contentType: file.contentType } };
}

function mapMultipart(rawBody: Buffer, boundary: string): Record<string, unknown> {
  let parts;
  try {
    parts = parseMultipart(rawBody, boundary);
  } catch (err) {
    if (err instanceof MultipartError) throw new WebhookRejection(400, `malformed multipart/form-data body: ${err.message}`);
    throw err;
  }
  const data: Record<string, unknown> = {};
  for (const part of parts) {
    const { mediaType, params } = parseContentType(part.contentType);
    let value: unknown;
    if (part.filename !== undefined) {
      value = binaryFromBytes(part.data, part.contentType ?? 'application/octet-stream', part.filename);
    } else if (isJsonType(mediaType)) {
      value = { data: parseJson(decodeText(part.data, params.charset), `multipart part "${part.name}"`), contentType: part.contentType };
    } else if (mediaType === '' || isTextType(mediaType)) {
      value = { data: decodeText(part.data, params.charset), contentType: part.contentType ?? 'text/plain' };
    } else {
      // A binary part sent without a filename is still a file.
      value = binaryFromBytes(part.data, part.contentType!);
    }
    // Repeated part names collect into an array, like repeated query parameters.
    if (part.name in data) {
      const prev = data[part.name];
      data[part.name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
    } else data[part.name] = value;
  }
  return data;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new WebhookRejection(400, `malformed JSON in ${what}: ${(err as Error).message}`);
  }
}

/** `a=1&b=2&b=3` → `{a: '1', b: ['2', '3']}`. */
export function queryToObject(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!query) return out;
  for (const [k, v] of new URLSearchParams(query)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}
