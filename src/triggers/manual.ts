/**
 * `$trigger` for a run that did not come through the trigger itself (`hcm-runner run`, the admin
 * API's "run now"): a webhook gets the payload as its JSON body, a schedule the current tick, a
 * poll the payload as its new items.
 */
import { newExecutionId } from '../common/ids.js';
import type { CompiledIntegration } from '../definition/types.js';

export interface ManualTriggerOptions {
  executionId?: string;
  webhookUrls?: { live: string; test: string };
  now?: Date;
}

export function manualTriggerData(integration: CompiledIntegration, payload: unknown, opts: ManualTriggerOptions = {}): unknown {
  const now = (opts.now ?? new Date()).toISOString();
  switch (integration.trigger.type) {
    case 'schedule':
      return { scheduledAt: now, firedAt: now, ...(isObject(payload) ? payload : {}) };
    case 'poll': {
      const items = Array.isArray(payload)
        ? payload
        : isObject(payload) && Array.isArray(payload.items)
          ? payload.items
          : payload === undefined
            ? []
            : [payload];
      return integration.trigger.mode === 'each' ? { item: items[0], items, polledAt: now } : { items, polledAt: now };
    }
    default:
      return {
        body: { data: payload ?? {}, contentType: 'application/json' },
        headers: { 'content-type': 'application/json' },
        queryParameters: {},
        pathFragment: '',
        method: 'POST',
        webhookUrls: opts.webhookUrls ?? { live: '', test: '' },
        executionId: opts.executionId ?? newExecutionId(),
        receivedAt: now,
      };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
