/** Hono environment of the runner's app. */
import type { HttpBindings } from '@hono/node-server';
import type { Surface } from './surfaces.js';

export type AppEnv = {
  /** `surface`: what the listener that took the request serves (absent: everything). */
  Bindings: HttpBindings & { surface?: Surface };
  Variables: {
    /** Metrics label overriding the matched route pattern. */
    routeLabel?: string;
    integration?: string;
  };
};
