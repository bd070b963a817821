/**
 * A small multipart/form-data parser over the raw bytes. We do not use `Response.formData()`
 * because it drops the Content-Type of text parts, and the `$trigger` mapping needs it (a JSON-typed text
 * part is parsed, other text parts stay text).
 */
export interface MultipartPart {
  name: string;
  filename?: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  contentType?: string;
  data: Buffer;
}

export class MultipartError extends Error {}

/** More parts than the server allows; thrown as soon as the limit is passed, before parsing the rest. */
export class TooManyPartsError extends MultipartError {
  constructor(readonly limit: number) {
    super(`more than ${limit} parts`);
  }
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One pass over the body: each search starts where the previous one ended, so the work is linear
 * in the body's size whatever the parts look like.
 */
export function parseMultipart(body: Buffer, boundary: string, maxParts = Infinity): MultipartPart[] {
  if (!boundary) throw new MultipartError('multipart/form-data without a boundary parameter');
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw new MultipartError('multipart body does not contain its boundary');
  pos += delimiter.length;
  const parts: MultipartPart[] = [];
  for (;;) {
    // After a delimiter: "--" ends the body, otherwise optional whitespace then CRLF.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    if (parts.length >= maxParts) throw new TooManyPartsError(maxParts);
    const lineEnd = body.indexOf(CRLF, pos);
    if (lineEnd < 0) throw new MultipartError('multipart body ends inside a part');
    pos = lineEnd + 2;
    const headerEnd = body.indexOf(HEADER_END, pos - 2);
    let headers: Record<string, string>;
    let dataStart: number;
    if (headerEnd === pos - 2) {
      headers = Object.create(null) as Record<string, string>;
      dataStart = pos + 2;
    } else {
      if (headerEnd < 0) throw new MultipartError('multipart part without a header block');
      headers = parseHeaders(body.subarray(pos, headerEnd).toString('utf8'));
      dataStart = headerEnd + 4;
    }
    const end = body.indexOf(next, dataStart);
    if (end < 0) throw new MultipartError('multipart body is missing its closing boundary');
    const disposition = parseDisposition(headers['content-disposition'] ?? '');
    if (disposition.name === undefined) throw new MultipartError('multipart part without a Content-Disposition name');
    const part: MultipartPart = { name: disposition.name, headers, data: body.subarray(dataStart, end) };
    if (disposition.filename !== undefined) part.filename = disposition.filename;
    if (headers['content-type']) part.contentType = headers['content-type'];
    parts.push(part);
    pos = end + next.length;
  }
}

function parseHeaders(block: string): Record<string, string> {
  // No prototype: a part header line is the caller's choice of name.
  const headers = Object.create(null) as Record<string, string>;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function parseDisposition(value: string): { name?: string; filename?: string } {
  const out: { name?: string; filename?: string } = {};
  // name="x"; filename="a b.png"; filename*=UTF-8''a%20b.png
  const re = /;\s*([a-zA-Z*]+)=(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value))) {
    const key = m[1]!.toLowerCase();
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim();
    if (key === 'name') out.name = raw;
    else if (key === 'filename' && out.filename === undefined) out.filename = raw;
    else if (key === 'filename*') {
      const q = raw.indexOf("''");
      try {
        out.filename = decodeURIComponent(q >= 0 ? raw.slice(q + 2) : raw);
      } catch {
        out.filename = raw;
      }
    }
  }
  return out;
}
