import type { MiddlewareHandler } from 'hono';
import type { SandboxEnv } from './http.js';

export interface Fault {
  match?: { method?: string; pathIncludes?: string };
  status?: number;
  retryAfter?: string;
  latencyMs?: number;
  reset?: boolean;
  times?: number;
}
interface ActiveFault extends Fault {
  remaining: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Injected failures; the first matching fault with uses left applies to a request. */
export class Faults {
  private list: ActiveFault[] = [];
  add(f: Fault): void {
    const times = f.times === undefined || f.times === null ? Infinity : Number(f.times);
    this.list.push({ ...f, remaining: times });
  }
  clear(): void {
    this.list = [];
  }
  snapshot(): Fault[] {
    return this.list.map(({ remaining, ...f }) => ({ ...f, times: remaining === Infinity ? undefined : remaining }));
  }
  take(method: string, path: string): Fault | undefined {
    const f = this.list.find(
      (x) =>
        x.remaining > 0 &&
        (!x.match?.method || x.match.method.toUpperCase() === method.toUpperCase()) &&
        (!x.match?.pathIncludes || path.includes(x.match.pathIncludes)),
    );
    if (!f) return undefined;
    f.remaining--;
    if (f.remaining <= 0) this.list = this.list.filter((x) => x !== f);
    return f;
  }
}

/** Applies faults to every request except the /__sandbox control routes. */
export function faultMiddleware(faults: Faults): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    if (c.req.path.startsWith('/__sandbox')) return next();
    const f = faults.take(c.req.method, c.req.path);
    if (!f) return next();
    if (f.latencyMs) await sleep(f.latencyMs);
    if (f.reset) {
      const sock = c.env?.incoming?.socket;
      if (sock) {
        sock.resetAndDestroy?.() ?? sock.destroy();
        return new Promise<Response>(() => {}); // the connection is gone; never answer
      }
      throw new Error('sandbox fault: connection reset');
    }
    if (f.status) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (f.retryAfter !== undefined) headers['retry-after'] = String(f.retryAfter);
      const msg = f.status === 429 ? 'rate limit exceeded' : `injected fault (status ${f.status})`;
      return new Response(JSON.stringify({ error: msg }), { status: f.status, headers });
    }
    return next();
  };
}
