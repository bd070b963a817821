import { paged, queryParams, req, service } from './common-inputs.js';

const eventId = { eventId: req('Event ID') };

export const businessProcessActions = service('businessProcess', [
  {
    key: 'listEvents',
    name: 'List Events',
    description: 'Business process events; the response is blank unless exactly one `worker` query parameter is given.',
    inputs: { ...paged, ...queryParams },
    request: { method: 'GET', path: '/events' },
  },
  { key: 'getEventById', name: 'Get Event by ID', inputs: eventId, request: { method: 'GET', path: '/events/{eventId}' } },
  {
    key: 'getEventAttachments',
    name: 'Get Event Attachments',
    inputs: { ...eventId, ...paged },
    request: { method: 'GET', path: '/events/{eventId}/attachments' },
  },
]);
