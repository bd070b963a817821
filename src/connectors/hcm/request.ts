/**
 * The one generic request builder: an action declaration plus its inputs → method, URL, query,
 * headers and body. Every HCM action except Raw Request goes through here.
 */
import { keyValuePairs, type QueryPairs } from '../key-value.js';
import { isBinaryValue, type BinaryValue } from '../../common/binary.js';
import { ActionError } from '../../common/errors.js';
import type { InputDecl } from '../types.js';
import { hcmServicePrefixes, type HcmActionDeclaration } from './declarations/types.js';

export type { QueryPairs } from '../key-value.js';

export interface BuiltRequest {
  method: string;
  /** Full URL including the query string. */
  url: string;
  /** Path as joined to the API URL (no query). */
  path: string;
  query: QueryPairs;
  headers: Record<string, string>;
  /** JSON body (already an object); absent for GET/DELETE and empty-body POSTs. */
  json?: unknown;
  /** multipart parts: part name → file. */
  files?: Record<string, BinaryValue | string>;
}

export { keyValuePairs };

/** Percent-encodes one path segment, leaving RFC 3986 sub-delims (`$`, `=`, …) and `:`/`@` alone. */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/%(24|26|2B|2C|3B|3D|3A|40)/gi, (m) => decodeURIComponent(m));
}

/**
 * One path input as one path segment. `/` and every other reserved character are percent-encoded
 * (`Employee_ID=21001` keeps its `=`), and the values that would still move the request to another
 * resource — `.`, `..` (also when sent percent-encoded, even twice) and nothing at all — are refused
 * before any request is sent.
 */
export function pathSegment(actionKey: string, name: string, value: unknown): string {
  const text = String(value);
  const decoded = decodeRepeatedly(text);
  if (decoded === '' || decoded === '.' || decoded === '..') {
    throw new ActionError(
      `${actionKey}: input ${name} is ${JSON.stringify(text)}, which is not an ID: path inputs are single path segments, and "", "." and ".." (also percent-encoded) are refused`,
      { code: 'invalid_input' },
    );
  }
  return encodePathSegment(text);
}

/** Percent-decodes until nothing changes (at most 3 rounds; malformed escapes stay as they are). */
function decodeRepeatedly(text: string): string {
  let current = text;
  for (let i = 0; i < 3 && current.includes('%'); i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) break;
    current = next;
  }
  return current;
}

/** `{apiUrl}` + path with exactly one `/` between them. */
export function joinUrl(apiUrl: string, path: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === 'object' && !Array.isArray(value) && !isBinaryValue(value) && Object.keys(value as object).length === 0)
  );
}

/** Converts one input to its wire form by its declared type (dates → ISO-8601). */
export function wireValue(name: string, decl: InputDecl | undefined, value: unknown, actionKey: string): unknown {
  if (decl?.type === 'date') {
    const d = value instanceof Date ? value : new Date(value as string | number);
    if (Number.isNaN(d.getTime())) {
      throw new ActionError(`${actionKey}: input ${name} is not a valid date`, { code: 'invalid_input' });
    }
    return d.toISOString();
  }
  if (decl?.type === 'string' && (typeof value === 'number' || typeof value === 'bigint')) return String(value);
  return value;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = target;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (!next || typeof next !== 'object' || Array.isArray(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** Inputs with declaration defaults applied where missing (the engine does it too; be defensive). */
export function withDefaults(decl: HcmActionDeclaration, inputs: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...inputs };
  for (const [name, d] of Object.entries(decl.inputs)) {
    if ((out[name] === undefined || out[name] === null) && d.default !== undefined) out[name] = d.default;
  }
  return out;
}

export function requireInputs(decl: HcmActionDeclaration, inputs: Record<string, unknown>): void {
  for (const [name, d] of Object.entries(decl.inputs)) {
    if (d.required && isEmpty(inputs[name])) {
      throw new ActionError(`${decl.key}: input ${name} (${d.label ?? name}) is required`, { code: 'invalid_input' });
    }
  }
}

/** Limit/offset for a paged call, checked against the range and defaults its declaration gives. */
export function pageOf(decl: HcmActionDeclaration, inputs: Record<string, unknown>): { limit: number; offset: number } {
  const { limit: limitDecl, offset: offsetDecl } = decl.inputs;
  if (!limitDecl || !offsetDecl) throw new Error(`${decl.key} is paged but declares no limit/offset inputs`);
  const limit = Number(inputs.limit ?? limitDecl.default);
  const offset = Number(inputs.offset ?? offsetDecl.default);
  const [min, max] = [limitDecl.minimum ?? 1, limitDecl.maximum ?? Number.MAX_SAFE_INTEGER];
  if (!Number.isInteger(limit) || limit < min || limit > max) {
    throw new ActionError(`${decl.key}: limit must be an integer from ${min} to ${max} (got ${String(inputs.limit)})`, { code: 'invalid_input' });
  }
  const minOffset = offsetDecl.minimum ?? 0;
  if (!Number.isInteger(offset) || offset < minOffset) {
    throw new ActionError(`${decl.key}: offset must be an integer ≥ ${minOffset} (got ${String(inputs.offset)})`, { code: 'invalid_input' });
  }
  return { limit, offset };
}

/**
 * Builds the request of one (non-raw) action. `inputs` should already carry defaults
 * (see `withDefaults`); `page` overrides limit/offset (fetchAll).
 */
export function buildRequest(
  decl: HcmActionDeclaration,
  rawInputs: Record<string, unknown>,
  apiUrl: string,
  page?: { limit: number; offset: number },
): BuiltRequest {
  const r = decl.request;
  if (r.raw) throw new Error(`${decl.key}: Raw Request is sent by raw-request.ts, not built from a declaration`);
  const inputs = withDefaults(decl, rawInputs);
  requireInputs(decl, inputs);
  const template = `${hcmServicePrefixes[r.service]}${r.path}`;
  const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = inputs[name];
    if (isEmpty(v)) throw new ActionError(`${decl.key}: input ${name} is required`, { code: 'invalid_input' });
    return pathSegment(decl.key, name, v);
  });

  const query: QueryPairs = [];
  if (r.queryParams) query.push(...keyValuePairs(inputs.queryParams, `${decl.key}: queryParams`));
  if (r.paged) {
    const p = page ?? pageOf(decl, inputs);
    for (const k of ['limit', 'offset'] as const) {
      const i = query.findIndex(([qk]) => qk === k);
      if (i >= 0) query.splice(i, 1);
    }
    query.push(['limit', String(p.limit)], ['offset', String(p.offset)]);
  }

  const headers: Record<string, string> = { accept: 'application/json' };
  const built: BuiltRequest = { method: r.method, path, query, headers, url: '' };
  if (r.binary) headers.accept = 'application/pdf, application/octet-stream, */*';

  if (r.body || r.additionalFields) {
    const body: Record<string, unknown> = {};
    for (const [input, field] of Object.entries(r.body ?? {})) {
      const v = inputs[input];
      if (isEmpty(v)) continue;
      setPath(body, field, wireValue(input, decl.inputs[input], v, decl.key));
    }
    if (r.additionalFields && !isEmpty(inputs.additionalFields)) {
      const extra = inputs.additionalFields;
      if (typeof extra !== 'object' || Array.isArray(extra)) {
        throw new ActionError(`${decl.key}: additionalFields must be a JSON object`, { code: 'invalid_input' });
      }
      Object.assign(body, extra);
    }
    built.json = body;
    headers['content-type'] = 'application/json';
  }
  if (r.multipart) {
    built.files = {};
    for (const [input, part] of Object.entries(r.multipart)) {
      const v = inputs[input];
      if (typeof v !== 'string' && !isBinaryValue(v)) {
        throw new ActionError(`${decl.key}: input ${input} must be a binary value or a string`, { code: 'invalid_input' });
      }
      built.files[part] = v;
    }
  }
  const qs = query.length ? `?${new URLSearchParams(query).toString()}` : '';
  built.url = joinUrl(apiUrl, path) + qs;
  return built;
}
