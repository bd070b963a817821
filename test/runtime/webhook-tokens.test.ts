/** Webhook tokens over a real SQLite store: calls made while the store is asked share its answer. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebhookTokens } from '../../src/runtime/webhook-tokens.js';
import { openStore } from '../../src/store/open.js';

describe('WebhookTokens', () => {
  it('asks the store once for concurrent calls, then answers from memory', async () => {
    const store = await openStore({ dataDir: mkdtempSync(join(tmpdir(), 'hcm-tokens-')), secret: 'test-secret' });
    try {
      let asked = 0;
      const webhookToken = store.webhookToken.bind(store);
      store.webhookToken = (integration: string) => {
        asked++;
        return webhookToken(integration);
      };
      const tokens = new WebhookTokens(store);
      const [a, b, c] = await Promise.all([tokens.tokenFor('one'), tokens.tokenFor('one'), tokens.tokenFor('two')]);
      expect(a).toBe(b);
      expect(c).not.toBe(a);
      expect(asked).toBe(2);
      expect(await tokens.tokenFor('one')).toBe(a);
      expect(asked).toBe(2);
      expect(await tokens.resolve(a)).toBe('one');
      // A rotation replaces the remembered token both ways.
      const rotated = await tokens.rotate('one');
      expect(await tokens.tokenFor('one')).toBe(rotated);
      expect(await tokens.resolve(a)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('a failed question is not remembered: the next call asks again', async () => {
    const store = await openStore({ dataDir: mkdtempSync(join(tmpdir(), 'hcm-tokens-')), secret: 'test-secret' });
    try {
      const webhookToken = store.webhookToken.bind(store);
      let fail = true;
      store.webhookToken = (integration: string) => (fail ? Promise.reject(new Error('store down')) : webhookToken(integration));
      const tokens = new WebhookTokens(store);
      await expect(Promise.all([tokens.tokenFor('one'), tokens.tokenFor('one')])).rejects.toThrow('store down');
      fail = false;
      expect(await tokens.tokenFor('one')).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
    } finally {
      await store.close();
    }
  });
});
