/**
 * The body part of `$trigger` (the mapping table in docs/authoring.md "webhook"). Malformed or
 * too deeply nested JSON (a JSON body or a JSON-typed multipart part) is a 400 for the caller and
 * creates no execution; so is malformed multipart, and too many parts or form fields is a 413.
 *
 * Every object built here from caller-chosen names (form fields, part names, query parameters)
 * holds them as own keys: a field named `constructor` or `__proto__` is a plain value like any
 * other, never an inherited property or a prototype write.
 */
import { binaryFromBytes } from '../../common/binary.js';
import { decodeText, isJsonType, isTextType, isValidUtf8, parseContentType } from './content-type.js';
import { parseJsonBounded } from './json.js';
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from './limits.js';
import { MultipartError, parseMultipart, TooManyPartsError } from './multipart.js';
import { HttpError } from '../../common/errors.js';
import { setOwn } from '../../common/own.js';

export interface BodyParts {
  body?: { data: unknown; contentType: string };
  /** A JSON body: the text `body.data` was parsed from (the stored trigger reuses it). */
  jsonText?: string;
  rawBody?: { data: string; contentType: string };
}

export function mapBody(rawBody: Buffer, contentTypeHeader: string | undefined, limits: IntakeLimits = DEFAULT_INTAKE_LIMITS): BodyParts {
  // No body at all (GET, DELETE, empty POST): neither body nor rawBody.
  if (rawBody.length === 0) return {};
  const contentType = contentTypeHeader ?? '';
  const { mediaType, params } = parseContentType(contentType);

  if (isJsonType(mediaType)) {
    const jsonText = decodeText(rawBody, params.charset);
    return { body: { data: parseJsonBounded(jsonText, limits.maxJsonDepth, 'the request body'), contentType }, jsonText };
  }

  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = rawBody.toString('utf8');
    // Counted before parsing: 6 MB of `a&a&…` is 3 million fields (seconds of work downstream).
    if (moreFieldsThan(form, limits.maxFormParts)) {
      throw new HttpError(413, `form body has more than ${limits.maxFormParts} fields; send fewer fields (the server's limit is --max-form-parts)`, {
        connection: 'close',
      });
    }
    return { body: { data: queryToObject(form), contentType } };
  }

  if (mediaType === 'multipart/form-data') return { body: { data: mapMultipart(rawBody, params.boundary ?? '', limits), contentType } };

  if (isTextType(mediaType) || (mediaType === '' && isValidUtf8(rawBody))) {
    return { rawBody: { data: decodeText(rawBody, params.charset), contentType } };
  }

  // Binary: the file as body.data, and the bytes (base64) as rawBody too.
  const file = binaryFromBytes(rawBody, contentType || 'application/octet-stream');
  return { body: { data: file, contentType: file.contentType }, rawBody: { data: file.base64, contentType: file.contentType } };
}

function mapMultipart(rawBody: Buffer, boundary: string, limits: IntakeLimits): Record<string, unknown> {
  let parts;
  try {
    parts = parseMultipart(rawBody, boundary, limits.maxFormParts);
  } catch (err) {
    if (err instanceof TooManyPartsError) {
      throw new HttpError(
        413,
        `multipart/form-data body has more than ${err.limit} parts; send fewer parts (the server's limit is --max-form-parts)`,
        { connection: 'close' },
      );
    }
    if (err instanceof MultipartError) throw new HttpError(400, `malformed multipart/form-data body: ${err.message}`);
    throw err;
  }
  const data = new NamedValues();
  for (const part of parts) {
    const { mediaType, params } = parseContentType(part.contentType);
    let value: unknown;
    if (part.filename !== undefined) {
      value = binaryFromBytes(part.data, part.contentType ?? 'application/octet-stream', part.filename);
    } else if (isJsonType(mediaType)) {
      value = {
        data: parseJsonBounded(decodeText(part.data, params.charset), limits.maxJsonDepth, `multipart part "${part.name}"`),
        contentType: part.contentType,
      };
    } else if (mediaType === '' || isTextType(mediaType)) {
      value = { data: decodeText(part.data, params.charset), contentType: part.contentType ?? 'text/plain' };
    } else {
      // A binary part sent without a filename is still a file.
      value = binaryFromBytes(part.data, part.contentType!);
    }
    // Repeated part names collect into an array, like repeated query parameters.
    data.add(part.name, value);
  }
  return data.toObject();
}

/**
 * Name → value where every name, `__proto__` and `constructor` included, is an own key (never an
 * inherited one, never a prototype write); a repeated name collects its values into an array in
 * arrival order. Appending is O(1) per value, so many parts or fields with one name stay linear.
 * No value added here is itself an array, so an array always means "repeated". A plain object
 * (not `Object.create(null)`, which V8 keeps in slow dictionary mode) guarded by `setOwn`.
 */
class NamedValues<T = unknown> {
  private readonly out: Record<string, T | T[]> = {};

  add(name: string, value: T): void {
    if (!Object.hasOwn(this.out, name)) {
      setOwn(this.out, name, value);
      return;
    }
    const prev = this.out[name];
    if (Array.isArray(prev)) prev.push(value);
    else setOwn(this.out, name, [prev as T, value]);
  }

  toObject(): Record<string, T | T[]> {
    return this.out;
  }
}

/** Whether `a=1&b=2…` holds more than `max` fields (empty segments are not fields). */
function moreFieldsThan(form: string, max: number): boolean {
  let fields = 0;
  for (let start = 0; start <= form.length; ) {
    let end = form.indexOf('&', start);
    if (end < 0) end = form.length;
    if (end > start && ++fields > max) return true;
    start = end + 1;
  }
  return false;
}

/** `a=1&b=2&b=3` → `{a: '1', b: ['2', '3']}` (a prototype-free object). */
export function queryToObject(query: string): Record<string, string | string[]> {
  const out = new NamedValues<string>();
  if (query) for (const [k, v] of new URLSearchParams(query)) out.add(k, v);
  return out.toObject();
}
