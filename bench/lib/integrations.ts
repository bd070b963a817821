/** The integration files the benchmarks serve (written into a temporary folder per scenario). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const HCM_CONNECTION = `connections:
  hcm:
    type: hcm-oauth2
    authorizeUrl: { env: HCM_AUTHORIZE_URL }
    tokenUrl: { env: HCM_TOKEN_URL }
    apiUrl: { env: HCM_API_URL }
    tenantId: sandbox
    clientId: { env: HCM_CLIENT_ID }
    clientSecret: { env: HCM_CLIENT_SECRET }
    refreshToken: { env: HCM_REFRESH_TOKEN }
`;

/** Async webhook, one trivial step: what the intake scenario posts to. */
export const intakeYaml = (name: string) => `name: ${name}
trigger:
  type: webhook
  methods: [POST]
steps:
  - id: note
    action: core.transform
    inputs:
      value: "{% $trigger.body.data.workerId %}"
`;

/** webhook → core.transform → HCM GET (sandbox). */
export const e2eYaml = (name: string, mode: 'sync' | 'async') => `name: ${name}
${HCM_CONNECTION}trigger:
  type: webhook
  methods: [POST]
  response: { mode: ${mode} }
steps:
  - id: shape
    action: core.transform
    inputs:
      value: "{% {'workerId': $trigger.body.data.workerId, 'source': $trigger.body.data.source} %}"
  - id: worker
    action: hcm.getStaffingWorkerById
    connection: hcm
    inputs:
      workerId: "{% $steps.shape.workerId %}"
`;

/**
 * Async webhook, one trivial step, the same as intakeYaml but with an idempotency key read from a
 * header the load generator makes distinct per request: every request claims a new key.
 */
export const idempotentIntakeYaml = (name: string, header: string) => `name: ${name}
trigger:
  type: webhook
  methods: [POST]
  idempotencyKey: "{% $trigger.headers.'${header}' %}"
steps:
  - id: note
    action: core.transform
    inputs:
      value: "{% $trigger.body.data.workerId %}"
`;

/**
 * Sync webhook → a forEach group over \`items\` items, two steps each (core.transform, then an HCM
 * GET against the sandbox), \`concurrency\` items at once; a last step answers the item count so
 * the response stays small.
 */
export const foreachYaml = (name: string, items: number, concurrency: number) => `name: ${name}
${HCM_CONNECTION}trigger:
  type: webhook
  methods: [POST]
  response: { mode: sync }
steps:
  - id: each
    forEach: "{% [1..${items}] %}"
    concurrency: ${concurrency}
    steps:
      - id: shape
        action: core.transform
        inputs:
          value: "{% {'workerId': $trigger.body.data.workerId, 'n': $item} %}"
      - id: worker
        action: hcm.getStaffingWorkerById
        connection: hcm
        inputs:
          workerId: "{% $steps.shape.workerId %}"
  - id: answer
    action: core.transform
    inputs:
      value: "{% {'items': $count($steps.each)} %}"
`;

/** Sync webhook with one trivial step: the sync overhead scenario. */
export const syncYaml = (name: string) => `name: ${name}
trigger:
  type: webhook
  methods: [POST]
  response: { mode: sync }
steps:
  - id: answer
    action: core.transform
    inputs:
      value: "{% {'executionId': $execution.id} %}"
`;

/** Sync webhook answering its version: the hot-reload scenario edits it. */
export const reloadYaml = (name: string, version: number) => `name: ${name}
trigger:
  type: webhook
  methods: [POST]
  response: { mode: sync }
steps:
  - id: answer
    action: core.transform
    inputs:
      value: { version: ${version} }
`;

export const scheduleYaml = (name: string) => `name: ${name}
trigger:
  type: schedule
  every: 1s
  overlap: allow
steps:
  - id: tick
    action: core.transform
    inputs:
      value: "{% $trigger.scheduledAt %}"
`;

/** One of the 1 000 generated integrations: a mix of webhooks (with HCM steps) and schedules. */
export function generatedYaml(i: number): string {
  const name = `generated-${String(i).padStart(4, '0')}`;
  if (i % 10 === 9) {
    return `name: ${name}
description: generated schedule ${i}
trigger:
  type: schedule
  cron: "${i % 60} 3 * * *"
steps:
  - id: stamp
    action: core.transform
    inputs:
      value: "{% {'at': $trigger.scheduledAt, 'n': ${i}} %}"
`;
  }
  return `name: ${name}
description: generated webhook ${i}
${HCM_CONNECTION}config:
  threshold: ${i}
trigger:
  type: webhook
  methods: [POST, PUT]
  response: { mode: ${i % 2 ? 'sync' : 'async'} }
steps:
  - id: check
    action: core.transform
    inputs:
      value: "{% {'id': $trigger.body.data.workerId, 'big': $trigger.body.data.amount > $config.threshold} %}"
  - id: worker
    if: "{% $steps.check.big %}"
    action: hcm.getStaffingWorkerById
    connection: hcm
    inputs:
      workerId: "{% $steps.check.id %}"
    retry: { maxAttempts: 3, delayMs: 200, backoff: exponential }
  - id: reply
    action: core.respond
    inputs:
      statusCode: 200
      body: "{% {'worker': $steps.worker.descriptor, 'n': ${i}} %}"
`;
}

export function writeIntegrations(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

/**
 * Async webhook, two steps, the first a write: an HCM POST (a job change) — a checkpoint is
 * committed after it — then an HCM GET (read-only, the last step: the final save). What the
 * `durable` scenario compares with the build before checkpoints.
 */
export const writeThenReadYaml = (name: string) => `name: ${name}
${HCM_CONNECTION}trigger:
  type: webhook
  methods: [POST]
steps:
  - id: change
    action: hcm.initiateJobChange
    connection: hcm
    inputs:
      workerId: Employee_ID=21001
      changeJobWorkerId: Employee_ID=21001
      effectiveDate: "2025-02-01"
      jobId: JOB-1
      reasonId: Lateral_Move
  - id: worker
    action: hcm.getStaffingWorkerById
    connection: hcm
    inputs:
      workerId: Employee_ID=21001
`;

/** Async webhook: core.wait for \`duration\`, then one trivial step (the `waits` scenario). */
export const waitYaml = (name: string, duration: string) => `name: ${name}
trigger:
  type: webhook
  methods: [POST]
steps:
  - id: pause
    action: core.wait
    inputs:
      for: ${duration}
  - id: after
    action: core.transform
    inputs:
      value: "{% $steps.pause.wokeAt %}"
`;
