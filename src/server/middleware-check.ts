/**
 * Runs one of hono's refusing middlewares (`csrf`, `bearerAuth`) as a check: undefined when it
 * lets the request through, else the response it refuses with. hono's middlewares refuse by
 * throwing an `HTTPException`; running them this way keeps the refusal next to the route that
 * wants its own answer (the console's 403 page, a failure counted by the auth throttle) instead
 * of in the app's one error handler, and keeps the routes after it out of the middleware's try.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';

export async function refusalOf(middleware: MiddlewareHandler, c: Context): Promise<Response | undefined> {
  let passed = false;
  try {
    const answer = await middleware(c, async () => {
      passed = true;
    });
    return passed ? undefined : (answer ?? c.res);
  } catch (err) {
    if (err instanceof HTTPException) return err.getResponse();
    throw err;
  }
}
