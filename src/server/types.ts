/** Hono environment of the runner's app. */
import type { HttpBindings } from '@hono/node-server';

export type AppEnv = {
  Bindings: HttpBindings;
  Variables: {
    /** Metrics label overriding the matched route pattern. */
    routeLabel?: string;
    integration?: string;
  };
};
