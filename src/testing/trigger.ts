/**
 * `$trigger` for a test case, built the way the trigger itself builds it: a webhook case becomes
 * a request (method, path fragment, query string, headers, body bytes) that goes through the
 * same mapping `serve` uses (triggers/webhook); a schedule gets its tick; a poll its new items.
 */
import type { CompiledIntegration } from '../definition/types.js';
import { buildWebhookTrigger } from '../triggers/webhook/trigger-data.js';
import { isJsonType, parseContentType } from '../triggers/webhook/content-type.js';
import type { WebhookRequest } from '../triggers/webhook/request.js';
import type { TriggerInput } from './types.js';

/** Placeholder webhook URLs: a test run has no server and no tokens. */
export function testWebhookUrls(integration: string): { live: string; test: string } {
  return { live: `http://hcm-runner.test/webhooks/${integration}`, test: `http://hcm-runner.test/webhooks/test/${integration}` };
}

/** Throws HttpError when the webhook would refuse the request (a malformed body). */
export function caseTrigger(integration: CompiledIntegration, input: TriggerInput, executionId: string, now: Date): unknown {
  const t = integration.trigger;
  const at = now.toISOString();
  switch (t.type) {
    case 'schedule': {
      const scheduledAt = input.scheduledAt ?? at;
      return { scheduledAt, firedAt: input.firedAt ?? scheduledAt };
    }
    case 'poll':
      if (t.mode === 'each') return { item: 'item' in input ? input.item : input.items?.[0], polledAt: at };
      return { items: input.items ?? [], polledAt: at };
    default:
      return buildWebhookTrigger(webhookRequest(t.methods, input), { webhookUrls: testWebhookUrls(integration.name), executionId, receivedAt: at });
  }
}

/** The request a caller would send: JSON body unless the headers name another content type. */
export function webhookRequest(methods: string[], input: TriggerInput): WebhookRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.toLowerCase()] = String(v);
  let rawBody = Buffer.alloc(0);
  if (input.body !== undefined) {
    if (typeof input.body === 'string') headers['content-type'] ??= 'text/plain; charset=utf-8';
    else headers['content-type'] ??= 'application/json';
    rawBody = Buffer.from(encodeBody(input.body, headers['content-type']));
    headers['content-length'] = String(rawBody.length);
  }
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) for (const one of Array.isArray(v) ? v : [v]) query.append(k, String(one));
  const method = input.method?.toUpperCase() ?? (methods.includes('POST') ? 'POST' : (methods[0] ?? 'POST'));
  return { method, pathFragment: input.pathFragment ?? '', query: query.toString(), headers, rawBody };
}

function encodeBody(body: unknown, contentType: string): string {
  if (typeof body === 'string') return body;
  const { mediaType } = parseContentType(contentType);
  if (mediaType === 'application/x-www-form-urlencoded' && body && typeof body === 'object') {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, String(one));
    return form.toString();
  }
  if (!isJsonType(mediaType)) return typeof body === 'object' ? JSON.stringify(body) : String(body);
  return JSON.stringify(body);
}
