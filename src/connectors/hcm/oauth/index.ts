export {
  buildAuthorizeUrl,
  completeAuthorization,
  createPkce,
  exchangeCode,
  hasPendingAuthorization,
  pendingAuthorizations,
  startAuthorization,
} from './authorize.js';
export { connectionConfig, tokenStoreKey, type HcmConnectionConfig } from './config.js';
export { getAccessToken, REFRESH_MARGIN_MS } from './provider.js';
export { DEFAULT_EXPIRES_IN_SEC } from './token-endpoint.js';
