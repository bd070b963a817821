/**
 * `$trigger` for a test case, built the way the trigger itself builds it (its type's `testing`):
 * a webhook case becomes a request that goes through the same mapping `serve` uses; a schedule
 * gets its tick; a poll its new items.
 */
import type { CompiledIntegration } from '../definition/types.js';
import { triggerTypeOf } from '../triggers/registry.js';
import type { TriggerInput } from './types.js';

/** Placeholder webhook URLs: a test run has no server and no tokens. */
export function testWebhookUrls(integration: string): { live: string; test: string } {
  return { live: `http://hcm-runner.test/webhooks/${integration}`, test: `http://hcm-runner.test/webhooks/test/${integration}` };
}

/** Throws HttpError when the webhook would refuse the request (a malformed body). */
export async function caseTrigger(integration: CompiledIntegration, input: TriggerInput, executionId: string, now: Date): Promise<unknown> {
  const testing = await triggerTypeOf(integration.trigger).testing();
  return testing.caseTrigger(integration, integration.trigger, input, { executionId, now, webhookUrls: testWebhookUrls(integration.name) });
}
