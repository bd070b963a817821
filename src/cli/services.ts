/**
 * Services for in-process runs from the CLI (run, connect): the data directory's store, so
 * tokens authorized here are the ones `serve` uses (and the other way round).
 */
import type { RuntimeServices } from '../connectors/types.js';
import { resolveSettings } from '../settings/resolve.js';
import { openStore } from '../store/open.js';

export interface LocalServices extends RuntimeServices {
  close: () => Promise<void>;
}

export async function localServices(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<LocalServices> {
  // The same settings `serve` reads, so tokens stored here are the ones it uses.
  const { databaseUrl, secret, publicUrl } = resolveSettings(['databaseUrl', 'secret', 'publicUrl'], { env });
  const store = await openStore({ dataDir, databaseUrl, secret });
  return {
    tokens: store.tokens,
    publicUrl: publicUrl ?? 'http://127.0.0.1:8080',
    // `run` is local development with a payload the developer chose: core.http may call local
    // fakes and services. Link-local and metadata addresses stay refused (docs/authoring.md, core.http).
    allowPrivateNetwork: true,
    close: () => store.close(),
  };
}
