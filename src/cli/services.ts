/** Services for in-process runs from the CLI: tokens in the data directory. */
import type { RuntimeServices, StoredTokens, TokenStore } from '../connectors/types.js';

export function localServices(dataDir: string): RuntimeServices {
  void dataDir;
  const map = new Map<string, StoredTokens>();
  const tokens: TokenStore = {
    get: async (k) => map.get(k),
    set: async (k, t) => void map.set(k, t),
    delete: async (k) => void map.delete(k),
    withLock: (_k, fn) => fn(),
  };
  return { tokens, publicUrl: process.env.HCM_RUNNER_PUBLIC_URL ?? 'http://127.0.0.1:8080' };
}
