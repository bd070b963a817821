/** Content-type classification for webhook bodies: JSON, form, multipart, text or binary. */

export interface ParsedContentType {
  /** Lower-cased media type without parameters, e.g. `application/json`. */
  mediaType: string;
  params: Record<string, string>;
}

export function parseContentType(value: string | undefined): ParsedContentType {
  // No prototype: parameter names are the caller's choice (`__proto__=…` is just a parameter).
  const params = Object.create(null) as Record<string, string>;
  if (!value) return { mediaType: '', params };
  const [type, ...rest] = value.split(';');
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    params[p.slice(0, eq).trim().toLowerCase()] = v;
  }
  return { mediaType: type!.trim().toLowerCase(), params };
}

export function isJsonType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'text/json';
}

/**
 * Text bodies are exposed as text; everything else (images, PDFs, octet streams, audio …) is a
 * file. A body without a content type is treated as text when it decodes as valid UTF-8, since
 * many senders omit the header on plain payloads.
 */
export function isTextType(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    mediaType.endsWith('+xml') ||
    mediaType.endsWith('/xml') ||
    mediaType.endsWith('+yaml') ||
    mediaType === 'application/yaml' ||
    mediaType === 'application/x-yaml' ||
    mediaType === 'application/javascript' ||
    mediaType === 'application/ecmascript' ||
    mediaType === 'application/graphql' ||
    mediaType === 'application/csv' ||
    mediaType === 'application/x-ndjson' ||
    mediaType === 'application/soap+xml'
  );
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Decodes text with its declared charset (UTF-8 when none or unknown). */
export function decodeText(bytes: Buffer, charset?: string): string {
  if (charset) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // unknown label: fall through to UTF-8
    }
  }
  return bytes.toString('utf8');
}

export function isValidUtf8(bytes: Buffer): boolean {
  try {
    utf8Strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
