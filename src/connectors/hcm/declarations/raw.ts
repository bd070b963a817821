import { flag, obj, req, service } from './common-inputs.js';

const kv = (label: string, description: string) => ({ type: 'keyValue' as const, label, description });

export const rawActions = service('raw', [
  {
    key: 'rawRequest',
    name: 'Raw Request',
    description: 'Any request to the HCM API: the URL is a path appended to the connection API URL (absolute URLs, //host and .. are rejected).',
    inputs: {
      url: req('URL', { description: 'Path only, appended to the API URL, e.g. /accountsPayable/v1/supplierInvoiceRequests.' }),
      method: req('Method', { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] }),
      data: { type: 'any', label: 'Data', description: 'Body payload (JSON). Cannot be combined with Form Data or File Data.' },
      formData: kv('Form Data', 'Multipart form fields.'),
      fileData: obj('File Data', { description: 'Multipart file parts: name → binary value or string.' }),
      fileDataFileNames: obj('File Data File Names', { description: 'File names; keys must match the File Data keys.' }),
      queryParameter: kv('Query Parameter', 'Query parameters (a map, or a list of {key, value}).'),
      header: kv('Header', 'Headers (a map, or a list of {key, value}); Authorization is always the connection token.'),
      responseType: req('Response Type', { enum: ['json', 'text', 'binary'], default: 'json', required: false }),
      timeout: { type: 'integer', label: 'Timeout', description: 'Maximum wait for a response, per attempt (ms).', minimum: 1 },
      retryDelayMs: {
        type: 'integer',
        label: 'Retry Delay (ms)',
        description: 'Delay between retries; ignored with Use Exponential Backoff.',
        default: 0,
        minimum: 0,
      },
      retryOnAllErrors: flag('Retry On All Errors', {
        default: false,
        description: 'Retry every erroneous response, not only 5xx and network errors.',
      }),
      maxRetryCount: {
        type: 'integer',
        label: 'Max Retry Count',
        description: 'Maximum retries; 0 means none.',
        default: 0,
        minimum: 0,
        maximum: 10,
      },
      useExponentialBackoff: flag('Use Exponential Backoff', { default: false, description: 'Doubling delay with jitter; honours Retry-After.' }),
    },
    request: { raw: true },
  },
]);
