/**
 * What each listener serves. One listener (the default) serves everything. With an admin listener
 * (`--admin-port`), the two never share an origin: the main listener serves only what the internet
 * may reach — caller-controlled answers (webhooks, callback URLs, the OAuth callback) and /healthz —
 * and the admin listener only what operators use (the console, /api, /metrics, and /healthz too).
 * Anything else is 404 on that listener, so a route added later is operator-only until it is
 * listed here as public.
 */
export type Surface = 'all' | 'public' | 'operator';

/** Paths the internet may reach: `/webhooks/…`, `/callbacks/…`, the OAuth redirect target. */
export function isPublicPath(path: string): boolean {
  return path.startsWith('/webhooks/') || path.startsWith('/callbacks/') || path === '/oauth/callback';
}

/** Answered on every listener (load balancers and probes check either). */
export function isSharedPath(path: string): boolean {
  return path === '/healthz';
}

/** The console, /api, /metrics: only operators use them (their errors may say what is wrong where). */
export function isOperatorPath(path: string): boolean {
  return !isPublicPath(path) && !isSharedPath(path);
}

/** Whether a listener serving `surface` answers `path` (otherwise: 404). */
export function servesPath(surface: Surface, path: string): boolean {
  if (surface === 'all' || isSharedPath(path)) return true;
  return isPublicPath(path) === (surface === 'public');
}
