/** The process runtime: registry, dispatcher, queue, tokens, retention. */
export { Runtime, type RuntimeOptions, type RuntimeEvents } from './runtime.js';
export { missingEnvProblems } from './missing-env.js';
export { IntegrationRegistry, type RegistryEntry, type RegistryChange, type RegistryEvents } from './registry.js';
export {
  Dispatcher,
  BusyError,
  DEFAULT_LIMITS,
  type DispatcherLimits,
  type DispatcherOptions,
  type ExecutionWatch,
  type RunOutcome,
} from './dispatcher.js';
export { InProcessQueue, type ExecutionQueue, type QueuedJob } from './queue.js';
export { WebhookTokens } from './webhook-tokens.js';
export { startRetention, DEFAULT_RETENTION_DAYS } from './retention.js';
