/** The HCM sandbox in its own process (the HCM service the end-to-end scenario calls). */
import { product } from '../lib/product.js';
import { serveParent } from '../lib/proc.js';

const { startSandbox } = await product<typeof import('../../src/sandbox/index.js')>('sandbox/index.js');

const sb = await startSandbox({ port: 0, quiet: true, tokenLifetimeSec: 24 * 3600 });
// The sandbox records every request for tests; drop them so a long run does not grow memory.
setInterval(() => sb.clearRequests(), 500).unref();
serveParent(
  { url: sb.url, apiUrl: sb.apiUrl, tokenUrl: sb.tokenUrl, authorizeUrl: sb.authorizeUrl, refreshToken: sb.issueRefreshToken() },
  {
    requests: () => sb.requests.length,
    /** A new refresh token: the sandbox rotates them, so each runner started against it needs its own. */
    issueRefreshToken: () => sb.issueRefreshToken(),
    /** CPU time used by this process so far, µs (user + system). */
    cpu: () => {
      const u = process.cpuUsage();
      return u.user + u.system;
    },
    stop: async () => {
      await sb.close();
      process.exit(0);
    },
  },
);
