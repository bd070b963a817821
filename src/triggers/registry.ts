/**
 * Every trigger type, one line each (src/triggers/type.ts says what a type provides). The
 * definition layer reads the specs from here, as connectors/catalog.ts is read for actions; the
 * runtime, the test runner, the admin API and the console ask an integration's type instead of
 * comparing type names. Only the types' definition-time parts are imported, so `hcm-runner
 * validate` loads no timers, stores or servers.
 */
import type { TriggerSpec } from '../definition/spec.js';
import type { CompiledIntegration, CompiledTrigger, WebhookOptions } from '../definition/types.js';
import { appEventTrigger } from './app-event/type.js';
import { callTrigger } from './call/type.js';
import { pollTrigger } from './poll/type.js';
import { scheduleTrigger } from './schedule/type.js';
import type { TriggerType } from './type.js';
import { webhookTrigger } from './webhook/type.js';

export const triggerTypes: readonly TriggerType[] = [
  webhookTrigger,
  scheduleTrigger,
  pollTrigger,
  appEventTrigger,
  callTrigger,
] as readonly TriggerType[];

const byName = new Map<string, TriggerType>(triggerTypes.map((t) => [t.spec.type, t]));

export const triggerSpecs: readonly TriggerSpec[] = triggerTypes.map((t) => t.spec);

/** The type named `type` (a file's `trigger.type`, a view's), if one is registered. */
export function findTriggerType(type: unknown): TriggerType | undefined {
  return typeof type === 'string' ? byName.get(type) : undefined;
}

export function findTriggerSpec(type: unknown): TriggerSpec | undefined {
  return findTriggerType(type)?.spec;
}

/** The type of a compiled trigger (compile only produces registered types). */
export function triggerTypeOf(trigger: CompiledTrigger): TriggerType {
  const t = byName.get(trigger.type);
  if (!t) throw new Error(`trigger type ${trigger.type} is not in src/triggers/registry.ts`);
  return t;
}

/** Its webhook keys when requests to /webhooks/<token> start the integration (webhook, appEvent). */
export function webhookOptionsOf(integration: CompiledIntegration | undefined): WebhookOptions | undefined {
  return integration && triggerTypeOf(integration.trigger).webhook?.options(integration.trigger);
}

/** Whether requests to /webhooks/<token> start it: it has a token, URLs, listening mode and captures. */
export function acceptsWebhooks(integration: CompiledIntegration | undefined): boolean {
  return !!integration && !!triggerTypeOf(integration.trigger).webhook;
}
