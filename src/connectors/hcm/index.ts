/** The HCM connector: 55 declared actions, one generic request builder, OAuth 2.0 tokens. */
import { ActionError } from '../../common/errors.js';
import type { ActionContext, ActionDeclaration, Connector } from '../types.js';
import { hcmActions, hcmConnectionType, HCM_CONNECTION_TYPE, type HcmActionDeclaration } from './declarations/index.js';
import { parseBody, sendHcm, type AuthContext } from './http.js';
import { maxResultBytes } from '../result-limit.js';
import { encodeMultipart } from './multipart.js';
import { connectionConfig, tokenStoreKey } from './oauth/config.js';
import { rawRequest } from './raw-request.js';
import { buildRequest, pageOf, withDefaults } from './request.js';

export { hcmActions, hcmConnectionType } from './declarations/index.js';

const byKey = new Map(hcmActions.map((a) => [a.key, a]));

/**
 * fetchAll stops after this many pages and reports `truncated: true`. Each page is as large as the
 * declaration's `limit` allows (its maximum, 100).
 */
export const fetchAllLimits = { maxPages: 1000 };

async function call(
  decl: HcmActionDeclaration,
  inputs: Record<string, unknown>,
  auth: AuthContext & { apiUrl: string },
  page?: { limit: number; offset: number },
) {
  const built = buildRequest(decl, inputs, auth.apiUrl, page);
  let body: string | Buffer | undefined;
  const headers = { ...built.headers };
  if (built.files) {
    const files = Object.fromEntries(Object.entries(built.files).map(([k, v]) => [k, { value: v }]));
    const enc = await encodeMultipart([], files);
    body = enc.body;
    headers['content-type'] = enc.contentType;
  } else if (built.json !== undefined) {
    body = JSON.stringify(built.json);
  }
  const res = await sendHcm(auth, { method: built.method, url: built.url, headers, body }, decl.key);
  return parseBody(res, !decl.request.raw && decl.request.binary ? 'binary' : 'auto');
}

async function fetchAll(decl: HcmActionDeclaration, inputs: Record<string, unknown>, auth: AuthContext & { apiUrl: string }, ctx: ActionContext) {
  const data: unknown[] = [];
  let total: number | undefined;
  const { maxPages } = fetchAllLimits;
  const pageSize = pageOf(decl, { limit: decl.inputs.limit?.maximum }).limit;
  for (let page = 0; page < maxPages; page++) {
    const res = (await call(decl, inputs, auth, { limit: pageSize, offset: page * pageSize })) as Record<string, unknown> | null;
    const items = Array.isArray(res?.data) ? (res.data as unknown[]) : [];
    if (typeof res?.total === 'number') total = res.total;
    data.push(...items);
    if (items.length < pageSize) return { data, total: total ?? data.length };
  }
  ctx.log('warn', `${decl.key}: fetchAll stopped after ${maxPages} pages (${data.length} items); result truncated`);
  return { data, total: total ?? data.length, truncated: true };
}

export const hcmConnector: Connector = {
  prefix: 'hcm',
  actions: hcmActions,
  connectionTypes: [hcmConnectionType],
  async invoke(action: ActionDeclaration, inputs: Record<string, unknown>, ctx: ActionContext): Promise<unknown> {
    const decl = byKey.get(action.key);
    if (!decl) throw new ActionError(`unknown HCM action ${action.key}`, { code: 'invalid_input' });
    const conn = ctx.connection;
    if (!conn) throw new ActionError(`${decl.key}: needs a connection of type ${HCM_CONNECTION_TYPE}`, { code: 'invalid_input' });
    if (conn.type !== HCM_CONNECTION_TYPE) {
      throw new ActionError(`${decl.key}: connection ${conn.name} has type ${conn.type}, expected ${HCM_CONNECTION_TYPE}`, { code: 'invalid_input' });
    }
    const conf = connectionConfig(conn);
    const auth = {
      connection: conn,
      tokens: ctx.services.tokens,
      storeKey: tokenStoreKey(conn),
      integration: ctx.integration,
      signal: ctx.signal,
      apiUrl: conf.apiUrl,
      maxResultBytes: maxResultBytes(ctx.services),
    };
    const all = withDefaults(decl, inputs ?? {});
    if (decl.request.raw) return rawRequest(all, auth, (l, m) => ctx.log(l, m));
    if (decl.request.paged) {
      if (all.fetchAll === true) return fetchAll(decl, all, auth, ctx);
      pageOf(decl, all); // range check before any request
    }
    return call(decl, all, auth);
  },
};

export default hcmConnector;
export {
  buildAuthorizeUrl,
  completeAuthorization,
  exchangeCode,
  getAccessToken,
  pendingAuthorizations,
  startAuthorization,
  tokenStoreKey,
} from './oauth/index.js';
export { renderHcmDocs, writeHcmDocs } from './docs.js';
