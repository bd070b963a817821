/**
 * The runtime's side of webhook intake: the narrow host src/triggers/webhook/intake.ts works
 * through (token lookup, backpressure, recording, sync watches, captures), so the intake policy
 * reaches the registry, tokens and dispatcher only here.
 */
import type { WebhookIntakeHost } from '../triggers/webhook/intake.js';
import { acceptsWebhooks } from '../triggers/registry.js';
import type { Runtime } from './runtime.js';

export function webhookIntakeHost(runtime: Runtime): WebhookIntakeHost {
  return {
    async integrationForToken(token) {
      const name = runtime.tokens.cachedIntegration(token) ?? (await runtime.tokens.resolve(token));
      const integration = name ? runtime.registry.get(name) : undefined;
      return acceptsWebhooks(integration) ? integration : undefined;
    },
    webhookUrls: (name) => runtime.webhookUrls(name),
    checkCapacity: (name) => runtime.dispatcher.checkCapacity(1, name),
    submit: (execution) => runtime.dispatcher.submit([execution]),
    watch: (id) => runtime.dispatcher.watch(id),
    isListening: (name) => runtime.isListening(name),
    addCapture: (capture) => runtime.addCapture(capture),
    env: runtime.env,
    limits: runtime.intake,
    logger: runtime.logger,
  };
}
