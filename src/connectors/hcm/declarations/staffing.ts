import { additionalFields, date, paged, queryParams, req, service, str } from './common-inputs.js';

const workerId = { workerId: req('Worker ID') };

export const staffingActions = service('staffing', [
  { key: 'getStaffingWorkers', name: 'Get Staffing Workers', inputs: { ...paged, ...queryParams }, request: { method: 'GET', path: '/workers' } },
  { key: 'getStaffingWorkerById', name: 'Get Staffing Worker By ID', inputs: workerId, request: { method: 'GET', path: '/workers/{workerId}' } },
  {
    key: 'getWorkerServiceDates',
    name: 'Get Worker Service Dates',
    inputs: { ...workerId, ...paged },
    request: { method: 'GET', path: '/workers/{workerId}/serviceDates' },
  },
  {
    key: 'getWorkerExplicitSkills',
    name: 'Get Worker Explicit Skills',
    inputs: { ...workerId, ...paged, ...queryParams },
    request: { method: 'GET', path: '/workers/{workerId}/explicitSkills' },
  },
  {
    key: 'initiateJobChange',
    name: 'Initiate Job Change',
    description: 'Initiates a job change for a worker; returns the job change ID (submit it with POST /staffing/v7/jobChanges/{id}/submit).',
    inputs: {
      ...workerId,
      effectiveDate: date('Effective Date'),
      changeJobWorkerId: str('Change Job Worker ID'),
      jobId: str('Job ID'),
      reasonId: str('Reason ID'),
      ...additionalFields,
    },
    request: {
      method: 'POST',
      path: '/workers/{workerId}/jobChanges',
      body: { effectiveDate: 'date', changeJobWorkerId: 'worker.id', jobId: 'job.id', reasonId: 'reason.id' },
    },
  },
  {
    key: 'initiateOrganizationAssignmentChange',
    name: 'Initiate Organization Assignment Change',
    description:
      'Initiates an organization assignment change; returns the change ID (submit it with POST /staffing/v7/organizationAssignmentChanges/{id}/submit).',
    inputs: {
      ...workerId,
      effectiveDate: date('Effective Date'),
      changeOrgWorkerId: str('Change Org Worker ID'),
      jobId: str('Job ID'),
      ...additionalFields,
    },
    request: {
      method: 'POST',
      path: '/workers/{workerId}/organizationAssignmentChanges',
      body: { effectiveDate: 'date', changeOrgWorkerId: 'worker.id', jobId: 'job.id' },
    },
  },
]);
