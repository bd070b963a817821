import type { InputDecl } from '../../types.js';
import { arr, flag, paged, queryParams, req, service, str, tenant } from './common-inputs.js';

const tableId = { tableId: req('Table ID') };
const tableInputs = (enableForAnalysis: InputDecl) => ({
  displayName: str('Display Name'),
  description: str('Description'),
  documentation: str('Documentation'),
  enableForAnalysis,
  name: str('Name', { description: 'Internal name used via API.' }),
  tags: arr('Tags', { description: 'Objects with id and name.', schema: { items: { type: 'object' } } }),
  fields: arr('Fields', {
    description: 'Objects {name, displayName, ordinal, type: {id, name}, precision?, scale?, required?, externalId?}.',
    schema: { items: { type: 'object' } },
  }),
});
const tableBody = {
  displayName: 'displayName',
  description: 'description',
  documentation: 'documentation',
  enableForAnalysis: 'enableForAnalysis',
  name: 'name',
  tags: 'tags',
  fields: 'fields',
};
const containerId = { fileContainerId: req('File Container ID') };

export const prismAnalyticsActions = service('prismAnalytics', [
  {
    key: 'listTables',
    name: 'List Tables',
    description: "Tables the user's security profile permits.",
    inputs: { ...tenant, ...paged, ...queryParams },
    request: { method: 'GET', path: '/tables' },
  },
  {
    key: 'getTableById',
    name: 'Get Table by ID',
    inputs: { ...tenant, ...tableId, ...queryParams },
    request: { method: 'GET', path: '/tables/{tableId}' },
  },
  {
    key: 'createTable',
    name: 'Create Table',
    inputs: { ...tenant, ...tableInputs(flag('Enable For Analysis', { default: false })) },
    request: { method: 'POST', path: '/tables', body: tableBody },
  },
  {
    key: 'updateTableById',
    name: 'Update Table by ID',
    inputs: { ...tableId, ...tenant, ...tableInputs(flag('Enable For Analysis')) },
    request: { method: 'PUT', path: '/tables/{tableId}', body: tableBody },
  },
  {
    key: 'listDataChanges',
    name: 'List Data Changes',
    description: 'The response shape depends on the `type` query parameter.',
    inputs: { ...tenant, ...paged, ...queryParams },
    request: { method: 'GET', path: '/dataChanges' },
  },
  {
    key: 'getDataChangeById',
    name: 'Get Data Change by ID',
    inputs: { ...tenant, dataChangeId: req('Data Change ID') },
    request: { method: 'GET', path: '/dataChanges/{dataChangeId}' },
  },
  { key: 'createFileContainer', name: 'Create File Container', inputs: { ...tenant }, request: { method: 'POST', path: '/fileContainers' } },
  {
    key: 'getFilesByContainerId',
    name: 'Get Files by Container ID',
    description: 'File metadata: name, size, checksum, state.',
    inputs: { ...tenant, ...containerId },
    request: { method: 'GET', path: '/fileContainers/{fileContainerId}/files' },
  },
  {
    key: 'uploadFilesByContainerId',
    name: 'Upload Files by Container ID',
    description: 'Loads a file into a container (multipart/form-data, one part named `file`).',
    inputs: {
      ...tenant,
      ...containerId,
      file: { type: 'binary', label: 'File', required: true, description: 'Binary value from a previous step, or a string (its UTF-8 bytes).' },
    },
    request: { method: 'POST', path: '/fileContainers/{fileContainerId}/files', multipart: { file: 'file' } },
  },
]);
