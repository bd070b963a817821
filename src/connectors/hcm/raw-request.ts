/**
 * Raw Request: any call under the connection's API URL, with its own retry settings (docs/hcm-service.md "Raw Request"). The URL is
 * confined to the API URL: absolute URLs, `//host`, `..` segments (also percent-encoded) and
 * backslashes are rejected before anything is sent.
 */
import { isBinaryValue, type BinaryValue } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { LogLevel } from '../types.js';
import { nonNegativeInput, retryRulesFrom } from '../http/retry-rules.js';
import { parseBody, sendHcm, type AuthContext } from './http.js';
import { encodeMultipart, type FilePart } from './multipart.js';
import { joinUrl, keyValuePairs } from './request.js';
import { rawActions } from './declarations/raw.js';

/** The declaration (declarations/raw.ts) is the one list of methods and response types. */
const declared = rawActions[0]!;
const KEY = declared.key;
const METHODS = new Set(declared.inputs.method!.enum as readonly string[]);
const RESPONSE_TYPES = declared.inputs.responseType!.enum as readonly string[];
const orList = (items: readonly string[]) => `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

const invalid = (msg: string) => new ActionError(`${KEY}: ${msg}`, { code: 'invalid_input' });

/** Resolves the URL input against the API URL, or throws `invalid_input`. */
export function confineUrl(apiUrl: string, input: unknown): string {
  if (typeof input !== 'string' || input.trim() === '') throw invalid('url is required (a path such as /person/v4/people)');
  const raw = input.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) throw invalid('url must be a path under the API URL, not an absolute URL');
  if (raw.startsWith('//')) throw invalid('url must be a path under the API URL, not //host');
  if (raw.includes('\\') || /%5c/i.test(raw)) throw invalid('url must not contain backslashes');
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw invalid('url must not contain control characters');
  const pathPart = raw.split(/[?#]/, 1)[0]!;
  let decoded = pathPart;
  for (let i = 0; i < 3; i++) {
    try {
      const next = decodeURIComponent(decoded);
      if (next === decoded) break;
      decoded = next;
    } catch {
      throw invalid('url has invalid percent-encoding');
    }
  }
  if (decoded.split('/').some((seg) => seg === '..' || seg === '.')) throw invalid('url must not contain . or .. segments');
  if (decoded.includes('\\') || decoded.startsWith('//')) throw invalid('url must not escape the API URL');
  const full = joinUrl(apiUrl, raw);
  const base = new URL(apiUrl);
  const u = new URL(full);
  const basePath = base.pathname.replace(/\/+$/, '');
  if (u.origin !== base.origin || !(u.pathname === basePath || u.pathname.startsWith(`${basePath}/`))) {
    throw invalid('url must stay under the API URL');
  }
  return full;
}

function asStringMap(value: unknown, label: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${label} must be an object`);
  return value as Record<string, unknown>;
}

const present = (v: unknown) =>
  v !== undefined && v !== null && v !== '' && !(typeof v === 'object' && !isBinaryValue(v) && Object.keys(v as object).length === 0);

export async function rawRequest(
  inputs: Record<string, unknown>,
  auth: AuthContext & { apiUrl: string },
  log: (level: LogLevel, message: string) => void,
): Promise<unknown> {
  const method = String(inputs.method ?? '').toUpperCase();
  if (!METHODS.has(method)) throw invalid(`method must be one of ${[...METHODS].join(', ')}`);
  let url = confineUrl(auth.apiUrl, inputs.url);
  const query = keyValuePairs(inputs.queryParameter, `${KEY}: queryParameter`);
  if (query.length) url += (url.includes('?') ? '&' : '?') + new URLSearchParams(query).toString();

  const responseType = String(inputs.responseType ?? declared.inputs.responseType!.default);
  if (!RESPONSE_TYPES.includes(responseType)) throw invalid(`responseType must be ${orList(RESPONSE_TYPES)}`);
  const retry = retryRulesFrom(inputs, KEY);
  const timeoutMs = nonNegativeInput(inputs, 'timeout', KEY) || undefined;

  const formData = keyValuePairs(inputs.formData, `${KEY}: formData`);
  const fileData = asStringMap(inputs.fileData, 'fileData');
  const fileNames = asStringMap(inputs.fileDataFileNames, 'fileDataFileNames');
  for (const k of Object.keys(fileNames)) if (!(k in fileData)) throw invalid(`fileDataFileNames key "${k}" has no matching fileData key`);
  const multipart = formData.length > 0 || Object.keys(fileData).length > 0;
  if (present(inputs.data) && multipart) throw invalid('data cannot be combined with formData or fileData');

  // User headers first, then multipart/body headers, then Authorization (added by the connection's dispatcher).
  const headers: Record<string, string> = { accept: responseType === 'json' ? 'application/json' : '*/*' };
  for (const [k, v] of keyValuePairs(inputs.header, `${KEY}: header`)) headers[k.toLowerCase()] = v;
  let body: string | Buffer | undefined;
  if (multipart) {
    const files: Record<string, FilePart> = {};
    for (const [k, v] of Object.entries(fileData)) {
      if (typeof v !== 'string' && !isBinaryValue(v)) throw invalid(`fileData.${k} must be a binary value or a string`);
      files[k] = { value: v as BinaryValue | string, filename: fileNames[k] === undefined ? undefined : String(fileNames[k]) };
    }
    const enc = await encodeMultipart(formData, files);
    body = enc.body;
    headers['content-type'] = enc.contentType;
  } else if (present(inputs.data)) {
    const d = inputs.data;
    if (typeof d === 'string') {
      body = d;
      if (!headers['content-type']) {
        let json = true;
        try {
          JSON.parse(d);
        } catch {
          json = false;
        }
        headers['content-type'] = json ? 'application/json' : 'text/plain; charset=utf-8';
      }
    } else {
      body = JSON.stringify(d);
      headers['content-type'] ??= 'application/json';
    }
  }

  const answer = await sendHcm(auth, { method, url, headers, body, timeoutMs, retry, log }, KEY);
  return parseBody(answer, responseType as 'json');
}
