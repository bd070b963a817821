/**
 * How an HCM action goes over the wire, as plain data. The one generic request builder
 * (`../request.ts`) reads this; the docs generator prints it. No runtime imports here.
 */
import type { ActionDeclaration, InputDecl } from '../../types.js';

export type HcmMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Service prefixes (docs/hcm-service.md "URLs"); `{tenant}` is filled from the `tenant` input. */
export const hcmServicePrefixes = {
  staffing: '/staffing/v7',
  common: '/api/common/v1',
  timeTracking: '/timeTracking/v5',
  absenceManagement: '/absenceManagement/v5',
  person: '/person/v4',
  accountsPayable: '/accountsPayable/v1',
  businessProcess: '/businessProcess/v1',
  connect: '/connect/v2',
  customerAccounts: '/customerAccounts/v1',
  prismAnalytics: '/api/prismAnalytics/v3/{tenant}',
  raw: '',
} as const;

export type HcmService = keyof typeof hcmServicePrefixes;

/** A request built from the declaration by the one generic builder (`../request.ts`). */
export interface HcmRoutedRequestDecl {
  raw?: false;
  method: HcmMethod;
  service: HcmService;
  /** Path after the prefix; `{input}` placeholders are filled from inputs (percent-encoded). */
  path: string;
  /**
   * Input name → body field path (dots nest: `worker.id` sends `{"worker": {"id": …}}`).
   * Date inputs are sent as ISO-8601; empty optional inputs are omitted.
   */
  body?: Readonly<Record<string, string>>;
  /** Sends `limit`/`offset` (and supports `fetchAll`). Derived from the inputs' routing (`service()`). */
  paged?: boolean;
  /** The `queryParams` key/value input is merged into the query string. Derived from the inputs' routing. */
  queryParams?: boolean;
  /** The `additionalFields` object is shallow-merged last into the body. Derived from the inputs' routing. */
  additionalFields?: boolean;
  /** multipart/form-data: input name → part name (one file part). */
  multipart?: Readonly<Record<string, string>>;
  /** The response is a document (PDF …), returned as a binary value. */
  binary?: boolean;
}

/**
 * Raw Request: method, URL, query, headers, body and retries all come from its inputs (declared
 * in `raw.ts` with their types, enums and defaults); `../raw-request.ts` sends it.
 */
export interface HcmRawRequestDecl {
  raw: true;
  service: 'raw';
}

export type HcmRequestDecl = HcmRoutedRequestDecl | HcmRawRequestDecl;

export interface HcmActionDeclaration extends ActionDeclaration {
  connectionType: 'hcm-oauth2';
  request: HcmRequestDecl;
}

/**
 * Where an input goes on the wire, said on the input itself (n8n's routing) so an action's table
 * names it once: `page` = limit/offset and fetchAll, `query` = a key/value map merged into the
 * query string, `mergeBody` = an object shallow-merged last into the body.
 */
export type HcmRouting = 'page' | 'query' | 'mergeBody';

export interface HcmInputDecl extends InputDecl {
  routing?: HcmRouting;
}

export type Inputs = Record<string, HcmInputDecl>;
