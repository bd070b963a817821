/**
 * The runtime's side of webhook intake: the narrow host src/triggers/webhook/intake.ts works
 * through (token lookup, backpressure, recording, sync watches, captures), so the intake policy
 * reaches the registry, tokens and dispatcher only here.
 */
import type { WebhookIntakeHost } from '../triggers/webhook/intake.js';
import { acceptsWebhooks } from '../triggers/registry.js';
import { FinishedWaits } from './finished-waits.js';
import type { Runtime } from './runtime.js';

export function webhookIntakeHost(runtime: Runtime): WebhookIntakeHost {
  let finished: FinishedWaits | undefined;
  return {
    async integrationForToken(token) {
      const name = runtime.tokens.cachedIntegration(token) ?? (await runtime.tokens.resolve(token));
      const integration = name ? runtime.registry.get(name) : undefined;
      return acceptsWebhooks(integration) ? integration : undefined;
    },
    webhookUrls: (name) => runtime.webhookUrls(name),
    checkCapacity: (name) => runtime.dispatcher.checkCapacity(1, name),
    submit: (execution) => runtime.dispatcher.submit([execution]),
    submitOnce: (execution, claim) => runtime.dispatcher.submitOnce(execution, claim),
    execution: async (id) => runtime.dispatcher.liveRecord(id) ?? (await runtime.store.getExecution(id)),
    awaitFinished: (id, timeoutMs) => (finished ??= new FinishedWaits(runtime.dispatcher, runtime.store)).wait(id, timeoutMs),
    watch: (id) => runtime.dispatcher.watch(id),
    isListening: (name) => runtime.isListening(name),
    addCapture: (capture) => runtime.addCapture(capture),
    env: runtime.env,
    limits: runtime.intake,
    logger: runtime.logger,
  };
}
