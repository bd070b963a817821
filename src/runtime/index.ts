/** The process runtime: registry, dispatcher, queue, tokens, retention. */
export { Runtime, type RuntimeOptions, type RuntimeEvents } from './runtime.js';
export { missingEnvProblems } from './missing-env.js';
export { IntegrationRegistry, type RegistryEntry, type RegistryChange, type RegistryEvents } from './registry.js';
export { ExecutionDispatcher, type DispatcherOptions, type DispatcherEvents } from './dispatch/dispatcher.js';
export { BusyError } from './dispatch/admission.js';
export { DEFAULT_LIMITS, type DispatcherLimits } from './dispatch/limits.js';
export type { ExecutionWatch, RunOutcome } from './dispatch/sync-waiters.js';
export { InProcessQueue, type ExecutionQueue, type QueuedJob } from '../store/queue.js';
export { WebhookTokens } from './webhook-tokens.js';
export { startRetention, DEFAULT_RETENTION_DAYS } from './retention.js';
