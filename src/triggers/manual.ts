/**
 * `$trigger` for a run that did not come through the trigger itself (`hcm-runner run`, the admin
 * API's "run now"), as the integration's trigger type builds it (`manualTrigger`): a webhook gets
 * the payload as its JSON body, a schedule the current tick, a poll the payload as its new items.
 */
import type { CompiledIntegration } from '../definition/types.js';
import { triggerTypeOf } from './registry.js';

export interface ManualTriggerOptions {
  executionId?: string;
  webhookUrls?: { live: string; test: string };
  now?: Date;
}

export function manualTriggerData(integration: CompiledIntegration, payload: unknown, opts: ManualTriggerOptions = {}): unknown {
  const now = (opts.now ?? new Date()).toISOString();
  return triggerTypeOf(integration.trigger).manualTrigger(integration.trigger, payload, {
    now,
    executionId: opts.executionId,
    webhookUrls: opts.webhookUrls,
  });
}
