import { paged, queryParams, req, service } from './common-inputs.js';

export const personActions = service('person', [
  { key: 'listPeople', name: 'List People', inputs: { ...paged, ...queryParams },
    request: { method: 'GET', path: '/people', paged: true, queryParams: true } },
  { key: 'getPersonById', name: 'Get Person by ID', inputs: { personId: req('Person ID') },
    request: { method: 'GET', path: '/people/{personId}' } },
]);
