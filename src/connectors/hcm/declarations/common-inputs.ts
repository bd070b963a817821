/** Small builders for input declarations, so each service file stays a readable table. */
import type { ActionOutput, InputDecl } from '../../types.js';
import type { HcmActionDeclaration, HcmRequestDecl, HcmRoutedRequestDecl, Inputs } from './types.js';
import { hcmServicePrefixes } from './types.js';

export const str = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'string', label, ...extra });
export const req = (label: string, extra: Partial<InputDecl> = {}): InputDecl => str(label, { required: true, ...extra });
export const date = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'date', label, ...extra });
export const num = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'number', label, ...extra });
export const flag = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'boolean', label, ...extra });
export const obj = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'object', label, ...extra });
export const arr = (label: string, extra: Partial<InputDecl> = {}): InputDecl => ({ type: 'array', label, ...extra });

export const tenant: Inputs = { tenant: req('Tenant', { description: 'The HCM tenant name used in API paths.' }) };
export const queryParams: Inputs = {
  queryParams: {
    type: 'keyValue',
    label: 'Query Params',
    routing: 'query',
    description: 'Key/value pairs sent as query-string parameters (a map, or a list of {key, value}).',
  },
};
export const additionalFields: Inputs = {
  additionalFields: {
    ...obj('Additional Fields', { description: 'Extra body fields, merged last (they override standard fields).' }),
    routing: 'mergeBody',
  },
};
export const paged: Inputs = {
  limit: {
    type: 'integer',
    label: 'Limit',
    description: 'Maximum number of objects in one response.',
    default: 20,
    minimum: 1,
    maximum: 100,
    routing: 'page',
  },
  offset: {
    type: 'integer',
    label: 'Offset',
    description: 'Zero-based index of the first object returned.',
    default: 0,
    minimum: 0,
    routing: 'page',
  },
  fetchAll: {
    ...flag('Fetch All', { description: 'Fetch every page (100 per request from offset 0) and return {data, total}.', default: false }),
    routing: 'page',
  },
};
export const instance = (withHref = true): Inputs => ({
  instanceId: str('Instance ID'),
  ...(withHref ? { instanceHref: str('Instance Href') } : {}),
  instanceDescriptor: str('Instance Descriptor'),
});
export const instanceBody = (withHref = true): Record<string, string> => ({
  instanceId: 'id',
  ...(withHref ? { instanceHref: 'href' } : {}),
  instanceDescriptor: 'descriptor',
});

export interface ActionSpec {
  key: string;
  name: string;
  description?: string;
  inputs: Inputs;
  /** How the request is built; paging, query parameters and body merging follow from the inputs' `routing`. */
  request: Omit<HcmRoutedRequestDecl, 'service' | 'paged' | 'queryParams' | 'additionalFields'> | { raw: true };
}

/** One service's table of actions → full declarations (key `hcm.<key>`, group = service). */
export function service(group: keyof typeof hcmServicePrefixes, specs: ActionSpec[]): HcmActionDeclaration[] {
  return specs.map((s) => {
    const common = { key: `hcm.${s.key}`, name: s.name, group, connectionType: 'hcm-oauth2' as const, inputs: s.inputs };
    if (s.request.raw) {
      const request: HcmRequestDecl = { raw: true, service: 'raw' };
      return {
        ...common,
        description: s.description ?? s.name,
        docs: { method: '(input)', path: '{apiUrl} + url input' },
        output: outputOf(request),
        request,
      };
    }
    const routes = new Set(Object.values(s.inputs).map((i) => i.routing));
    const request: HcmRoutedRequestDecl = {
      ...s.request,
      service: group,
      ...(routes.has('page') ? { paged: true } : {}),
      ...(routes.has('query') ? { queryParams: true } : {}),
      ...(routes.has('mergeBody') ? { additionalFields: true } : {}),
    };
    const path = `${hcmServicePrefixes[group]}${request.path}`;
    return {
      ...common,
      description: s.description ?? `${s.name} (${request.method} ${path}).`,
      // A GET changes nothing at the service: no checkpoint after it (docs/promises.md "Resume, not restart").
      ...(request.method === 'GET' ? { readOnly: true } : {}),
      docs: { method: request.method, path },
      output: outputOf(request),
      request,
    };
  });
}

/** Results by action family (docs/connectors/hcm.md): a page of a list, a document, or the resource. */
function outputOf(r: HcmRequestDecl): ActionOutput {
  if (r.raw)
    return { description: 'The response body as responseType says: parsed JSON, text, or a binary value {contentType, size, base64, filename?}.' };
  if (r.binary) return { description: 'The document as a binary value.', keys: ['contentType', 'size', 'base64', 'filename'] };
  if (r.paged)
    return { description: 'One page {data, total}; with fetchAll every item in data (truncated: true past the page cap).', keys: ['data', 'total'] };
  if (r.method === 'GET') return { description: 'The resource (the parsed response body).' };
  return { description: 'The parsed response body (normally the resource written).' };
}
