/**
 * `--sandbox` of `serve` and `run`: starts the built-in HCM sandbox in-process and points the HCM
 * env variables at it, so connections written as `{ env: HCM_API_URL, default: … }` (as in the
 * examples) talk to it without any tenant. One function for both commands: what `--sandbox` sets
 * is documented once (docs/authoring.md, "Trying it against the sandbox").
 */
import type { TokenStore } from '../connectors/types.js';
import { tokenStoreKey } from '../connectors/hcm/oauth/config.js';
import type { Sandbox } from '../sandbox/index.js';

/** The variables `--sandbox` sets, in the order the help texts name them. */
export const SANDBOX_ENV_NAMES = [
  'HCM_API_URL',
  'HCM_TOKEN_URL',
  'HCM_AUTHORIZE_URL',
  'HCM_CLIENT_ID',
  'HCM_CLIENT_SECRET',
  'HCM_REFRESH_TOKEN',
  'HCM_TENANT',
] as const;

/**
 * Starts the sandbox on port 8090 (a free port when 8090 is taken, e.g. by `npm start` in another
 * terminal) and returns, with it, the environment integrations see: `base` with SANDBOX_ENV_NAMES
 * pointing at the sandbox, so their `{env: …}` values resolve to it. Overrides values already set:
 * `--sandbox` means "use the sandbox". `base` itself (process.env) is left alone.
 */
export async function startLocalSandbox(base: NodeJS.ProcessEnv = process.env): Promise<{ sandbox: Sandbox; env: NodeJS.ProcessEnv }> {
  // Loaded on demand: commands without --sandbox never load the sandbox.
  const { startSandbox, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } = await import('../sandbox/index.js');
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({ port: 8090, quiet: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    sandbox = await startSandbox({ port: 0, quiet: true });
  }
  const values: Record<(typeof SANDBOX_ENV_NAMES)[number], string> = {
    HCM_API_URL: sandbox.apiUrl,
    HCM_TOKEN_URL: sandbox.tokenUrl,
    HCM_AUTHORIZE_URL: sandbox.authorizeUrl,
    HCM_CLIENT_ID: DEFAULT_CLIENT_ID,
    HCM_CLIENT_SECRET: DEFAULT_CLIENT_SECRET,
    HCM_REFRESH_TOKEN: sandbox.issueRefreshToken(),
    HCM_TENANT: 'sandbox',
  };
  return { sandbox, env: { ...base, ...values } };
}

/**
 * The sandbox keeps its grants in memory, so tokens a previous sandbox issued (stored in the data
 * directory by an earlier `serve --sandbox` or `run --sandbox`) are void; were they kept, the first
 * HCM call after a restart would fail with invalid_grant. Forgets the ones stored for the sandbox's
 * token endpoint and client (the key every connection written with the HCM_* variables uses).
 */
export async function forgetPreviousSandboxTokens(tokens: TokenStore, env: NodeJS.ProcessEnv): Promise<void> {
  const config: Record<string, unknown> = {
    authorizeUrl: env.HCM_AUTHORIZE_URL,
    tokenUrl: env.HCM_TOKEN_URL,
    apiUrl: env.HCM_API_URL,
    tenantId: env.HCM_TENANT,
    clientId: env.HCM_CLIENT_ID,
    clientSecret: env.HCM_CLIENT_SECRET,
  };
  await tokens.delete(tokenStoreKey({ name: 'sandbox', type: 'hcm-oauth2', config }));
}
