import { paged, queryParams, req, service } from './common-inputs.js';

export const personActions = service('person', [
  { key: 'listPeople', name: 'List People', inputs: { ...paged, ...queryParams }, request: { method: 'GET', path: '/people' } },
  { key: 'getPersonById', name: 'Get Person by ID', inputs: { personId: req('Person ID') }, request: { method: 'GET', path: '/people/{personId}' } },
]);
