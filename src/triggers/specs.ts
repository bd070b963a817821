/**
 * Every trigger's spec, for the definition layer (validation, compile, schema, docs) — as
 * connectors/catalog.ts is for actions. Only specs are imported here, never a trigger's runtime
 * part, so `hcm-runner validate` loads no timers, stores or servers. Adding a trigger: a
 * `src/triggers/<type>/spec.ts`, one line here, `npm run docs`.
 */
import type { TriggerSpec } from '../definition/spec.js';
import { appEventSpec } from './app-event/spec.js';
import { pollSpec } from './poll/spec.js';
import { scheduleSpec } from './schedule/spec.js';
import { webhookSpec } from './webhook/spec.js';

export const triggerSpecs: readonly TriggerSpec[] = [webhookSpec, scheduleSpec, pollSpec, appEventSpec] as readonly TriggerSpec[];

export function findTriggerSpec(type: unknown): TriggerSpec | undefined {
  return triggerSpecs.find((s) => s.type === type);
}
