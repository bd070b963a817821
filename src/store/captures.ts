/**
 * Listening-mode captures as the store keeps them: bounded, because anybody who knows a test URL
 * can send them (docs/security.md "Listening-mode captures"). One capture becomes
 * - `trigger`: the `$trigger` as received, or cut to `maxBytes` (its body replaced by a preview);
 * - `preview`: the same cut to `CAPTURE_LIST_BYTES`, what lists carry (NULL when `trigger` fits);
 * - `summary`: method, path, content type and the body's first characters (the live stream, the
 *   console's list and `hcm-runner listen` show only this);
 * - `size` (bytes of the whole `$trigger` JSON as received) and `truncated`.
 * So no list and no live event ever reads or sends more than a preview; the full stored capture is
 * read one at a time (`Store.getCapture`).
 */
import { triggerJson } from '../common/trigger-json.js';
import { settingSpecs } from '../settings/spec.js';
import type { Capture, CaptureSummary } from './types.js';

/** Captures kept per integration (HCM_RUNNER_CAPTURE_KEEP): the oldest are dropped. */
export const DEFAULT_CAPTURE_KEEP = settingSpecs.captureKeep.default;
/** Bytes of one capture's `$trigger` JSON stored at most (HCM_RUNNER_CAPTURE_MAX_BYTES). */
export const DEFAULT_CAPTURE_MAX_BYTES = settingSpecs.captureMaxBytes.default;
/** Bytes of one capture's `$trigger` JSON a list carries at most. */
export const CAPTURE_LIST_BYTES = 64 * 1024;
/** Characters of the body preview in a summary. */
const SUMMARY_PREVIEW_CHARS = 200;

/** The columns of one capture row. */
export interface CaptureColumns {
  trigger: string;
  preview: string | null;
  summary: string;
  size: number;
  truncated: boolean;
}

/** What the store writes for a new capture, and the summary it announces. */
export function captureColumns(capture: Capture, maxBytes = DEFAULT_CAPTURE_MAX_BYTES): { columns: CaptureColumns; summary: CaptureSummary } {
  const text = triggerJson(capture.trigger);
  const size = Buffer.byteLength(text);
  // The body's text is made once (a large body is serialised again only here) and only when cut.
  let body: BodyText | undefined | null = null;
  const bodyText = () => (body === null ? (body = bodyTextOf(capture.trigger)) : body);
  const stored = size <= maxBytes ? text : cutTrigger(capture.trigger, bodyText(), text, size, maxBytes);
  const truncated = stored !== text;
  const storedBytes = truncated ? Buffer.byteLength(stored) : size;
  const preview = storedBytes <= CAPTURE_LIST_BYTES ? null : cutTrigger(capture.trigger, bodyText(), text, size, CAPTURE_LIST_BYTES);
  const fields = summaryFields(capture.trigger);
  const summary: CaptureSummary = { id: capture.id, integration: capture.integration, receivedAt: capture.receivedAt, size, truncated, ...fields };
  return { columns: { trigger: stored, preview, summary: JSON.stringify(fields), size, truncated }, summary };
}

type SummaryFields = Omit<CaptureSummary, 'id' | 'integration' | 'receivedAt' | 'size' | 'truncated'>;

/** The summary fields of a trigger (for rows stored before summaries existed, too). */
export function summaryFields(trigger: unknown): SummaryFields {
  const t = (trigger && typeof trigger === 'object' ? trigger : {}) as Record<string, unknown>;
  const out: SummaryFields = { preview: '' };
  if (typeof t.method === 'string') out.method = t.method;
  if (typeof t.pathFragment === 'string') out.path = `/${t.pathFragment}${queryString(t.queryParameters)}`;
  const body = (t.body ?? t.rawBody) as { data?: unknown; contentType?: unknown; preview?: unknown } | undefined;
  if (body && typeof body === 'object') {
    if (typeof body.contentType === 'string') out.contentType = body.contentType;
    const data = 'data' in body ? body.data : body.preview;
    out.preview = oneLine(typeof data === 'string' && t.rawBody ? data : jsonHead(data, SUMMARY_PREVIEW_CHARS * 4));
  } else if (typeof t.method !== 'string') {
    out.preview = oneLine(jsonHead(trigger, SUMMARY_PREVIEW_CHARS * 4));
  }
  return out;
}

/** The start of a value's JSON text: a long string is cut before it is serialised. */
function jsonHead(value: unknown, chars: number): string {
  if (typeof value === 'string' && value.length > chars) return JSON.stringify(value.slice(0, chars));
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    // `{"k":"<huge string>"}`: serialise the object with each long string cut.
    const cut: Record<string, unknown> = {};
    let length = 0;
    for (const [k, v] of Object.entries(value)) {
      if (length > chars) break;
      cut[k] = typeof v === 'string' && v.length > chars ? v.slice(0, chars) : v;
      length += k.length + (typeof v === 'string' ? Math.min(v.length, chars) : 16);
    }
    return (JSON.stringify(cut) ?? '').slice(0, chars);
  }
  return (JSON.stringify(value) ?? '').slice(0, chars);
}

interface BodyText {
  key: 'body' | 'rawBody';
  /** The body's data as text: a raw body's own string, else its JSON. */
  data: string;
}

function bodyTextOf(trigger: unknown): BodyText | undefined {
  if (!trigger || typeof trigger !== 'object' || Array.isArray(trigger)) return undefined;
  const t = trigger as Record<string, unknown>;
  const key = 'body' in t ? 'body' : 'rawBody' in t ? 'rawBody' : undefined;
  if (!key) return undefined;
  const data = (t[key] as { data?: unknown } | undefined)?.data;
  return { key, data: key === 'rawBody' && typeof data === 'string' ? data : (JSON.stringify(data) ?? '') };
}

/**
 * The trigger's JSON cut to at most `maxBytes`: the body (`body` or `rawBody`) becomes
 * `{contentType, truncated: true, size, preview}` with as much of its text as fits; when even the
 * rest is too large, the whole trigger becomes `{truncated: true, size, preview}`.
 */
function cutTrigger(trigger: unknown, body: BodyText | undefined, text: string, size: number, maxBytes: number): string {
  if (body) {
    const t = trigger as Record<string, unknown>;
    const contentType = (t[body.key] as { contentType?: unknown } | undefined)?.contentType;
    const shell = { ...t, [body.key]: { contentType, truncated: true, size: Buffer.byteLength(body.data), preview: '' } };
    const room = maxBytes - Buffer.byteLength(JSON.stringify(shell));
    if (room > 0) {
      (shell[body.key] as { preview: string }).preview = headOf(body.data, room);
      return JSON.stringify(shell);
    }
  }
  const shell = { truncated: true, size, preview: '' };
  shell.preview = headOf(text, Math.max(0, maxBytes - Buffer.byteLength(JSON.stringify(shell))));
  return JSON.stringify(shell);
}

/**
 * A start of `text` whose JSON string form takes at most `room` bytes. Escapes and multi-byte
 * characters take more than one byte each, so the cut is measured on the encoded form and shrunk
 * in proportion until it fits (one or two tries: each shrinks by the measured ratio).
 */
function headOf(text: string, room: number): string {
  let n = Math.min(text.length, room);
  for (;;) {
    // Never end on half of a surrogate pair.
    const code = text.charCodeAt(n - 1);
    if (n > 0 && code >= 0xd800 && code <= 0xdbff) n--;
    const bytes = Buffer.byteLength(JSON.stringify(text.slice(0, n))) - 2;
    if (bytes <= room) return text.slice(0, n);
    n = Math.floor((n * room) / bytes);
  }
}

function oneLine(text: string): string {
  const head = text.slice(0, SUMMARY_PREVIEW_CHARS * 4).replace(/\s+/g, ' ');
  return head.length > SUMMARY_PREVIEW_CHARS ? `${head.slice(0, SUMMARY_PREVIEW_CHARS - 1)}…` : head;
}

function queryString(q: unknown): string {
  if (!q || typeof q !== 'object') return '';
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(q as Record<string, unknown>))
    for (const one of Array.isArray(v) ? v : [v]) if (typeof one === 'string') query.append(k, one);
  const s = query.toString();
  return s ? `?${s.length > 500 ? `${s.slice(0, 499)}…` : s}` : '';
}
