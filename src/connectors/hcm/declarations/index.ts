/** The HCM connector's 55 actions and its connection type, as plain data. */
import type { ConnectionTypeDecl } from '../../types.js';
import { absenceManagementActions } from './absence-management.js';
import { accountsPayableActions } from './accounts-payable.js';
import { businessProcessActions } from './business-process.js';
import { commonActions } from './common.js';
import { connectActions } from './connect.js';
import { customerAccountsActions } from './customer-accounts.js';
import { personActions } from './person.js';
import { prismAnalyticsActions } from './prism-analytics.js';
import { rawActions } from './raw.js';
import { staffingActions } from './staffing.js';
import { timeTrackingActions } from './time-tracking.js';
import type { HcmActionDeclaration } from './types.js';

export type { HcmActionDeclaration, HcmRequestDecl, HcmMethod, HcmService } from './types.js';
export { hcmServicePrefixes } from './types.js';

export const hcmActions: readonly HcmActionDeclaration[] = [
  ...staffingActions,
  ...commonActions,
  ...timeTrackingActions,
  ...absenceManagementActions,
  ...personActions,
  ...accountsPayableActions,
  ...businessProcessActions,
  ...connectActions,
  ...customerAccountsActions,
  ...prismAnalyticsActions,
  ...rawActions,
];

export const HCM_CONNECTION_TYPE = 'hcm-oauth2';

/** Authorization request parameters the runner sets itself, so `authorizeParams` may not name them. */
export const AUTHORIZE_PARAMS_RESERVED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

export const hcmConnectionType: ConnectionTypeDecl = {
  type: HCM_CONNECTION_TYPE,
  description:
    'HCM service, OAuth 2.0 authorization-code grant (API client registered by a tenant administrator, 60-minute access token expiry enforced).',
  inputs: {
    authorizeUrl: {
      type: 'string',
      label: 'Authorize URL',
      required: true,
      description: 'Authorization endpoint; `<tenant_id>` is replaced by the tenant ID.',
    },
    tokenUrl: { type: 'string', label: 'Token URL', required: true, description: 'Token endpoint; `<tenant_id>` is replaced by the tenant ID.' },
    apiUrl: { type: 'string', label: 'API URL', required: true, description: 'API base address, ending with the path segment ccx.' },
    tenantId: { type: 'string', label: 'Tenant ID', description: 'Replaces `<tenant_id>` in the authorize and token URLs.' },
    clientId: { type: 'string', label: 'Client ID', required: true },
    clientSecret: { type: 'string', label: 'Client secret', required: true },
    scopes: { type: 'string', label: 'Scopes', description: 'Space-separated OAuth 2.0 scopes.' },
    refreshToken: {
      type: 'string',
      label: 'Refresh Token',
      description: 'Long-lived refresh token for headless use (used when nothing is stored yet).',
    },
    clientAuth: {
      type: 'string',
      label: 'Client Authentication',
      enum: ['body', 'basic'],
      default: 'body',
      description: 'Send client credentials in the token request body or as HTTP Basic.',
    },
    authorizeParams: {
      type: 'object',
      label: 'Authorize Parameters',
      description:
        'Extra parameters of the authorization request, e.g. `prompt: consent` — which an OpenID Connect server needs to issue a refresh token for `offline_access`. ' +
        `The parameters the runner sets itself (${AUTHORIZE_PARAMS_RESERVED.map((k) => `\`${k}\``).join(', ')}) cannot be given here.`,
      schema: {
        additionalProperties: { $ref: '#/$defs/stringValue' },
        propertyNames: {
          not: { enum: [...AUTHORIZE_PARAMS_RESERVED] },
          description: 'the runner sets it itself (the scope comes from `scopes`)',
        },
      },
    },
    issuer: {
      type: 'string',
      label: 'Issuer',
      description:
        "The authorization server's issuer identifier. When set, an authorization response that names another issuer (its `iss` parameter, RFC 9207) is refused.",
    },
  },
};
