/** The webhook trigger's logic, free of any HTTP server: intake policy, mapping, HMAC, custom responses. */
export { HttpError } from '../../common/errors.js';
export { handleWebhook, bodyTooLarge, type IntakeRequest, type IntakeResponse, type WebhookIntakeHost } from './intake.js';
export {
  buildWebhookTrigger,
  redactHeaders,
  REDACTED,
  type WebhookTriggerData,
  type WebhookTriggerRequest,
  type WebhookUrls,
} from './trigger-data.js';
export { mapBody, queryToObject, type BodyParts } from './body.js';
export { parseMultipart, MultipartError, type MultipartPart } from './multipart.js';
export { verifyHmac, signHmac, type HmacCheck } from './hmac.js';
export { evaluateAsyncResponse, renderResponse, type RenderedResponse } from './response.js';
export { parseContentType, isJsonType, isTextType } from './content-type.js';
