/**
 * Retention (src/runtime/retention.ts) over a real SQLite store: expired callback tokens (and the
 * requests they hold) are deleted with the executions' pruning pass, whatever the retention days;
 * tokens still valid stay.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startRetention } from '../../src/runtime/retention.js';
import { execution, type TempStore, tempStore } from './dispatch/helpers.js';

const open: TempStore[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

describe('retention', () => {
  it.each([0, 14])('deletes expired callback tokens (retention days %i), keeps valid ones', async (days) => {
    const t = await tempStore();
    open.push(t);
    const e = execution('w');
    await t.store.enqueue([e]);
    const token = () => randomBytes(32).toString('base64url');
    const expired = token();
    const valid = token();
    const base = { executionId: e.id, integration: 'w', step: 'cb', test: false };
    await t.store.createCallback({ ...base, token: expired, expiresAt: new Date(Date.now() - 1000).toISOString() });
    await t.store.createCallback({ ...base, token: valid, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const retention = startRetention(t.store, { days });
    retention.stop();
    await retention.runOnce();
    expect(await t.store.getCallback(expired)).toBeUndefined();
    expect((await t.store.getCallback(valid))?.executionId).toBe(e.id);
  });
});
