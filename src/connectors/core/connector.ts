/** The built-in actions' behaviour; their declarations are in ./declarations.ts. */
import { ActionError, StopSignal } from '../../common/errors.js';
import type { ActionContext, ActionDeclaration, Connector, LogLevel } from '../types.js';
import { coreActions } from './declarations.js';
import { coreHttp } from './http.js';

type Impl = (inputs: Record<string, unknown>, ctx: ActionContext) => unknown | Promise<unknown>;

const impls: Record<string, Impl> = {
  'core.transform': (i) => i.value,
  'core.splitString': (i) => {
    const parts = String(i.string).split(String(i.separator ?? ','));
    return i.removeEmpty ? parts.filter((p) => p !== '') : parts;
  },
  'core.respond': (i, ctx) => {
    const response = {
      statusCode: Number(i.statusCode ?? 200),
      contentType: i.contentType as string | undefined,
      headers: stringHeaders(i.headers),
      body: i.body,
    };
    ctx.respond(response);
    return response;
  },
  // Results, not nothing: a step that ran is then `$exists($steps.<id>)` like any other.
  'core.log': (i, ctx) => {
    const level = (i.level as LogLevel) ?? 'info';
    const message = typeof i.message === 'string' ? i.message : JSON.stringify(i.message);
    ctx.log(level, message);
    return { level, message };
  },
  'core.http': coreHttp,
  'core.stop': (i, ctx) => {
    if (i.statusCode !== undefined || i.body !== undefined) ctx.respond({ statusCode: Number(i.statusCode ?? 200), body: i.body });
    throw new StopSignal();
  },
  'core.call': (i, ctx) => {
    if (!ctx.call) throw new ActionError('core.call cannot run here');
    return ctx.call(String(i.integration), i.input);
  },
  'core.fail': (i) => {
    throw new ActionError(String(i.message), { code: 'failed_by_step' });
  },
};

function stringHeaders(h: unknown): Record<string, string> | undefined {
  if (!h || typeof h !== 'object') return undefined;
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
}

export const coreConnector: Connector = {
  prefix: 'core',
  actions: coreActions,
  async invoke(action: ActionDeclaration, inputs, ctx) {
    const impl = impls[action.key];
    if (!impl) throw new ActionError(`core has no action ${action.key}`);
    return impl(inputs, ctx);
  },
};
