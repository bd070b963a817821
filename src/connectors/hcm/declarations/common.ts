import { arr, date, flag, instance, instanceBody, paged, queryParams, req, service, str } from './common-inputs.js';

const workerId = { workerId: req('Worker ID') };

export const commonActions = service('common', [
  {
    key: 'getCustomerById',
    name: 'Get Customer by ID',
    inputs: { customerId: req('Customer ID') },
    request: { method: 'GET', path: '/customers/{customerId}' },
  },
  {
    key: 'getOrganizationById',
    name: 'Get Organization by ID',
    inputs: { organizationId: req('Organization ID') },
    request: { method: 'GET', path: '/organizations/{organizationId}' },
  },
  { key: 'listOrganizations', name: 'List Organizations', inputs: { ...queryParams }, request: { method: 'GET', path: '/organizations' } },
  {
    key: 'getWorkerBusinessTitleChanges',
    name: 'Get Worker Business Title Changes',
    inputs: { ...workerId, ...paged },
    request: { method: 'GET', path: '/workers/{workerId}/businessTitleChanges' },
  },
  {
    key: 'createWorkerBusinessTitleChange',
    name: 'Create Worker Business Title Change',
    inputs: { ...workerId, proposedBusinessTitle: str('Proposed Business Title'), ...instance() },
    request: {
      method: 'POST',
      path: '/workers/{workerId}/businessTitleChanges',
      body: { proposedBusinessTitle: 'proposedBusinessTitle', ...instanceBody() },
    },
  },
  {
    key: 'createJobChange',
    name: 'Create Job Change',
    inputs: {
      ...workerId,
      supervisoryOrganizationId: str('Supervisory Organization ID'),
      jobChangeReasonId: str('Job Change Reason ID'),
      moveManagersTeam: flag('Move Managers Team', { default: false, description: 'When true also moves subordinate teams to the new manager.' }),
      effectiveDate: date('Effective Date'),
      proposedOrganizations: arr('Proposed Organizations'),
      ...instance(),
    },
    request: {
      method: 'POST',
      path: '/workers/{workerId}/jobChanges',
      body: {
        supervisoryOrganizationId: 'supervisoryOrganization.id',
        jobChangeReasonId: 'jobChangeReason.id',
        moveManagersTeam: 'moveManagersTeam',
        effectiveDate: 'effective',
        proposedOrganizations: 'proposedOrganizations',
        ...instanceBody(),
      },
    },
  },
]);
