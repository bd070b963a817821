/** Every one of the 55 actions, driven from one table: the wire request as the sandbox saw it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionError } from '../../../src/common/errors.js';
import { hcmActions } from '../../../src/connectors/hcm/index.js';
import { apiRequests, harness, invoke, type Harness } from './helpers.js';

const W = 'Employee_ID=21001';
const D = '2024-06-01';
const ISO = '2024-06-01T00:00:00.000Z';
const T = '/ccx/api/prismAnalytics/v3/acme';
const page = { limit: '20', offset: '0' };

interface Row {
  key: string;
  inputs: Record<string, unknown>;
  expect: { method: string; path: string; query?: Record<string, unknown>; body?: unknown };
}

const rows: Row[] = [
  // staffing
  {
    key: 'getStaffingWorkers',
    inputs: { limit: 5, offset: 9, queryParams: { search: 'a' } },
    expect: { method: 'GET', path: '/ccx/staffing/v7/workers', query: { search: 'a', limit: '5', offset: '9' } },
  },
  { key: 'getStaffingWorkerById', inputs: { workerId: W }, expect: { method: 'GET', path: `/ccx/staffing/v7/workers/${W}` } },
  {
    key: 'getWorkerServiceDates',
    inputs: { workerId: '123$456' },
    expect: { method: 'GET', path: '/ccx/staffing/v7/workers/123$456/serviceDates', query: page },
  },
  {
    key: 'getWorkerExplicitSkills',
    inputs: { workerId: 'w 1/2', queryParams: [{ key: 'skillName', value: 'Go' }] },
    expect: { method: 'GET', path: '/ccx/staffing/v7/workers/w%201%2F2/explicitSkills', query: { skillName: 'Go', ...page } },
  },
  {
    key: 'initiateJobChange',
    inputs: { workerId: 'w1', effectiveDate: D, changeJobWorkerId: 'w2', jobId: 'j1', reasonId: 'r1', additionalFields: { x: 1 } },
    expect: {
      method: 'POST',
      path: '/ccx/staffing/v7/workers/w1/jobChanges',
      body: { date: ISO, worker: { id: 'w2' }, job: { id: 'j1' }, reason: { id: 'r1' }, x: 1 },
    },
  },
  {
    key: 'initiateOrganizationAssignmentChange',
    inputs: { workerId: 'w1', effectiveDate: D, changeOrgWorkerId: 'w3', jobId: 'j1' },
    expect: {
      method: 'POST',
      path: '/ccx/staffing/v7/workers/w1/organizationAssignmentChanges',
      body: { date: ISO, worker: { id: 'w3' }, job: { id: 'j1' } },
    },
  },
  // common
  { key: 'getCustomerById', inputs: { customerId: 'c1' }, expect: { method: 'GET', path: '/ccx/api/common/v1/customers/c1' } },
  { key: 'getOrganizationById', inputs: { organizationId: 'o1' }, expect: { method: 'GET', path: '/ccx/api/common/v1/organizations/o1' } },
  {
    key: 'listOrganizations',
    inputs: { queryParams: { type: 'Supervisory' } },
    expect: { method: 'GET', path: '/ccx/api/common/v1/organizations', query: { type: 'Supervisory' } },
  },
  {
    key: 'getWorkerBusinessTitleChanges',
    inputs: { workerId: 'w1' },
    expect: { method: 'GET', path: '/ccx/api/common/v1/workers/w1/businessTitleChanges', query: page },
  },
  {
    key: 'createWorkerBusinessTitleChange',
    inputs: { workerId: 'w1', proposedBusinessTitle: 'Lead', instanceId: 'i', instanceHref: 'h', instanceDescriptor: 'd' },
    expect: {
      method: 'POST',
      path: '/ccx/api/common/v1/workers/w1/businessTitleChanges',
      body: { proposedBusinessTitle: 'Lead', id: 'i', href: 'h', descriptor: 'd' },
    },
  },
  {
    key: 'createJobChange',
    inputs: {
      workerId: 'w1',
      supervisoryOrganizationId: 'o1',
      jobChangeReasonId: 'r1',
      effectiveDate: D,
      proposedOrganizations: [{ id: 'o2' }],
      instanceId: '',
      instanceHref: null,
    },
    expect: {
      method: 'POST',
      path: '/ccx/api/common/v1/workers/w1/jobChanges',
      body: {
        supervisoryOrganization: { id: 'o1' },
        jobChangeReason: { id: 'r1' },
        moveManagersTeam: false,
        effective: ISO,
        proposedOrganizations: [{ id: 'o2' }],
      },
    },
  },
  // time tracking
  { key: 'listWorkers', inputs: {}, expect: { method: 'GET', path: '/ccx/timeTracking/v5/workers', query: page } },
  { key: 'getWorkerById', inputs: { workerId: W }, expect: { method: 'GET', path: `/ccx/timeTracking/v5/workers/${W}` } },
  {
    key: 'getTimeClockEvents',
    inputs: { queryParams: { worker: 'w1', fromDate: D } },
    expect: { method: 'GET', path: '/ccx/timeTracking/v5/timeClockEvents', query: { worker: 'w1', fromDate: D } },
  },
  { key: 'getTimeClockEventById', inputs: { timeClockEventId: 'e1' }, expect: { method: 'GET', path: '/ccx/timeTracking/v5/timeClockEvents/e1' } },
  {
    key: 'updateTimeClockEventById',
    inputs: {
      timeClockEventId: 'e1',
      clockEventDateTime: '2024-06-01T08:30:00Z',
      clockEventTimeZoneId: 'tz',
      clockEventOverrideRate: 1.5,
      referenceId: 'ref',
      clockEventTimeEntryCodeId: 'tec',
      clockEventProjectPlanTaskId: 'ppt',
      clockEventProjectId: 'p',
      clockEventComment: 'c',
      instanceId: 'e1',
      instanceHref: 'h',
      instanceDescriptor: 'd',
      additionalFields: { comment: 'override' },
    },
    expect: {
      method: 'PUT',
      path: '/ccx/timeTracking/v5/timeClockEvents/e1',
      body: {
        dateTime: '2024-06-01T08:30:00.000Z',
        timeZone: { id: 'tz' },
        overrideRate: 1.5,
        reference_ID: 'ref',
        timeEntryCode: { id: 'tec' },
        projectPlanTask: { id: 'ppt' },
        project: { id: 'p' },
        comment: 'override',
        id: 'e1',
        href: 'h',
        descriptor: 'd',
      },
    },
  },
  {
    key: 'deleteTimeClockEventById',
    inputs: { timeClockEventId: 'e1' },
    expect: { method: 'DELETE', path: '/ccx/timeTracking/v5/timeClockEvents/e1' },
  },
  {
    key: 'createWorkerTimeBlock',
    inputs: { workerId: 'w1', comment: 'c' },
    expect: { method: 'POST', path: '/ccx/timeTracking/v5/workers/w1/workerTimeBlock', body: { doNotBill: false, comment: 'c' } },
  },
  {
    key: 'updateWorkerTimeBlock',
    inputs: { workerId: 'w1', workerTimeBlockId: 'b1', comment: 'c', instanceId: 'b1', instanceDescriptor: 'd' },
    expect: { method: 'PATCH', path: '/ccx/timeTracking/v5/workers/w1/workerTimeBlock/b1', body: { comment: 'c', id: 'b1', descriptor: 'd' } },
  },
  {
    key: 'deleteWorkerTimeBlock',
    inputs: { workerId: 'w1', workerTimeBlockId: 'b1' },
    expect: { method: 'DELETE', path: '/ccx/timeTracking/v5/workers/w1/workerTimeBlock/b1' },
  },
  // absence
  { key: 'getTimeOffBalanceById', inputs: { balanceId: 'b1' }, expect: { method: 'GET', path: '/ccx/absenceManagement/v5/balances/b1' } },
  {
    key: 'getTimeOffDetails',
    inputs: { workerId: 'w1', queryParams: { status: 'Approved' } },
    expect: { method: 'GET', path: '/ccx/absenceManagement/v5/workers/w1/timeOffDetails', query: { status: 'Approved', ...page } },
  },
  {
    key: 'postTimeOffRequest',
    inputs: {
      workerId: 'w1',
      actionId: 'a',
      overallBusinessProcessId: 'obp',
      days: [{ date: D, dailyQuantity: '8' }],
      timeOffComment: 'trip',
      transactionStatusId: 'ts',
      timeOffAttachments: [{ fileName: 'x' }],
      timeOffForId: 'f',
    },
    expect: {
      method: 'POST',
      path: '/ccx/absenceManagement/v5/workers/w1/requestTimeOff',
      body: {
        businessProcessParameters: {
          action: { id: 'a' },
          overallBusinessProcess: { id: 'obp' },
          comment: 'trip',
          transactionStatus: { id: 'ts' },
          attachments: [{ fileName: 'x' }],
          for: { id: 'f' },
        },
        days: [{ date: D, dailyQuantity: '8' }],
      },
    },
  },
  // person
  {
    key: 'listPeople',
    inputs: { queryParams: { universal_ID: 'UID-100000' } },
    expect: { method: 'GET', path: '/ccx/person/v4/people', query: { universal_ID: 'UID-100000', ...page } },
  },
  { key: 'getPersonById', inputs: { personId: 'p1' }, expect: { method: 'GET', path: '/ccx/person/v4/people/p1' } },
  // accounts payable
  {
    key: 'listSupplierInvoiceRequests',
    inputs: { limit: 100 },
    expect: { method: 'GET', path: '/ccx/accountsPayable/v1/supplierInvoiceRequests', query: { limit: '100', offset: '0' } },
  },
  {
    key: 'getSupplierInvoiceRequestById',
    inputs: { supplierInvoiceRequestId: 's1' },
    expect: { method: 'GET', path: '/ccx/accountsPayable/v1/supplierInvoiceRequests/s1' },
  },
  {
    key: 'getSupplierInvoiceRequestAttachments',
    inputs: { supplierInvoiceRequestId: 's1', offset: 2 },
    expect: { method: 'GET', path: '/ccx/accountsPayable/v1/supplierInvoiceRequests/s1/attachments', query: { limit: '20', offset: '2' } },
  },
  {
    key: 'createSupplierInvoiceRequest',
    inputs: {
      currencyId: 'USD',
      companyId: 'co',
      taxAmount: 5,
      requesterId: 'rq',
      controlTotalAmount: '105.00',
      paymentTermsId: 'pt',
      referenceTypeId: 'rt',
      memo: 'm',
      supplierInvoiceId: 'si',
      supplierInvoiceDescriptor: 'sd',
      additionalFields: { lines: [{ amount: '100' }], memo: 'M2' },
    },
    expect: {
      method: 'POST',
      path: '/ccx/accountsPayable/v1/supplierInvoiceRequests',
      body: {
        currency: { id: 'USD' },
        company: { id: 'co' },
        taxAmount: '5',
        requester: { id: 'rq' },
        controlTotalAmount: '105.00',
        paymentTerms: { id: 'pt' },
        referenceType: { id: 'rt' },
        memo: 'M2',
        id: 'si',
        descriptor: 'sd',
        lines: [{ amount: '100' }],
      },
    },
  },
  {
    key: 'createSupplierInvoiceRequestAttachment',
    inputs: {
      supplierInvoiceRequestId: 's1',
      fileLength: 1234,
      contentTypeId: 'application/pdf',
      fileName: 'a.pdf',
      supplierInvoiceRequestAttachmentDescriptor: 'd',
      supplierInvoiceRequestAttachmentId: 'a1',
    },
    expect: {
      method: 'POST',
      path: '/ccx/accountsPayable/v1/supplierInvoiceRequests/s1/attachments',
      body: { fileLength: '1234', contentType: { id: 'application/pdf' }, fileName: 'a.pdf', descriptor: 'd', id: 'a1' },
    },
  },
  {
    key: 'submitSupplierInvoiceRequest',
    inputs: { supplierInvoiceRequestId: 's1', supplierInvoiceInstanceId: 's1', supplierInvoiceInstanceDescriptor: 'd' },
    expect: { method: 'POST', path: '/ccx/accountsPayable/v1/supplierInvoiceRequests/s1/submit', body: { id: 's1', descriptor: 'd' } },
  },
  // business process
  {
    key: 'listEvents',
    inputs: { queryParams: [{ key: 'worker', value: 'w1' }] },
    expect: { method: 'GET', path: '/ccx/businessProcess/v1/events', query: { worker: 'w1', ...page } },
  },
  { key: 'getEventById', inputs: { eventId: 'ev1' }, expect: { method: 'GET', path: '/ccx/businessProcess/v1/events/ev1' } },
  {
    key: 'getEventAttachments',
    inputs: { eventId: 'ev1' },
    expect: { method: 'GET', path: '/ccx/businessProcess/v1/events/ev1/attachments', query: page },
  },
  // connect
  {
    key: 'listMessageTemplates',
    inputs: { queryParams: { inactive: false } },
    expect: { method: 'GET', path: '/ccx/connect/v2/messageTemplates', query: { inactive: 'false' } },
  },
  { key: 'getMessageTemplateById', inputs: { messageTemplateId: 'mt1' }, expect: { method: 'GET', path: '/ccx/connect/v2/messageTemplates/mt1' } },
  {
    key: 'createMessageTemplate',
    inputs: {
      createdById: 'u1',
      emailDetail: { subject: 's' },
      pushDetail: { message: 'm' },
      messageTemplateName: 'n',
      referenceId: 'r',
      templateDescriptor: 'd',
      templateId: 't',
    },
    expect: {
      method: 'POST',
      path: '/ccx/connect/v2/messageTemplates',
      body: {
        createdBy: { id: 'u1' },
        emailDetail: { subject: 's' },
        pushDetail: { message: 'm' },
        name: 'n',
        referenceID: 'r',
        inactive: true,
        descriptor: 'd',
        id: 't',
      },
    },
  },
  {
    key: 'updateMessageTemplateById',
    inputs: { messageTemplateId: 'mt1', messageTemplateName: 'n2' },
    expect: { method: 'PUT', path: '/ccx/connect/v2/messageTemplates/mt1', body: { name: 'n2' } },
  },
  {
    key: 'sendMessage',
    inputs: {
      senderOverrideId: 'so',
      communicationId: 'cm',
      emailDetail: { subject: 's' },
      contacts: [{ id: 'w1' }],
      messageTemplateId: 'mt1',
      notificationTypeId: 'nt',
      pushDetail: { message: 'p' },
    },
    expect: {
      method: 'POST',
      path: '/ccx/connect/v2/sendMessage',
      body: {
        senderOverride: { id: 'so' },
        commID: { id: 'cm' },
        emailDetail: { subject: 's' },
        recipients: [{ id: 'w1' }],
        messageTemplate: { id: 'mt1' },
        notificationType: { id: 'nt' },
        pushDetail: { message: 'p' },
      },
    },
  },
  // customer accounts
  {
    key: 'listInvoices',
    inputs: { queryParams: { invoiceStatus: 'Approved' } },
    expect: { method: 'GET', path: '/ccx/customerAccounts/v1/invoices', query: { invoiceStatus: 'Approved' } },
  },
  { key: 'getInvoiceById', inputs: { invoiceId: 'i1' }, expect: { method: 'GET', path: '/ccx/customerAccounts/v1/invoices/i1' } },
  { key: 'getInvoicePdf', inputs: { invoicePdfId: 'i1' }, expect: { method: 'GET', path: '/ccx/customerAccounts/v1/invoicePDFs/i1' } },
  { key: 'getPaymentById', inputs: { paymentId: 'p1' }, expect: { method: 'GET', path: '/ccx/customerAccounts/v1/payments/p1' } },
  {
    key: 'createPayment',
    inputs: {
      amount: 100,
      reference: 'r',
      transactionNumber: 't',
      typeId: 'Check',
      paymentDate: D,
      companyId: 'co',
      memo: 'm',
      paymentDescriptor: 'd',
      paymentId: 'p9',
    },
    expect: {
      method: 'POST',
      path: '/ccx/customerAccounts/v1/payments',
      body: {
        readyToAutoApply: true,
        reference: 'r',
        transactionNumber: 't',
        amount: '100',
        type: { id: 'Check' },
        date: ISO,
        company: { id: 'co' },
        memo: 'm',
        descriptor: 'd',
        id: 'p9',
      },
    },
  },
  // analytics
  { key: 'listTables', inputs: { tenant: 'acme' }, expect: { method: 'GET', path: `${T}/tables`, query: page } },
  {
    key: 'getTableById',
    inputs: { tenant: 'acme', tableId: 't1', queryParams: { type: 'full' } },
    expect: { method: 'GET', path: `${T}/tables/t1`, query: { type: 'full' } },
  },
  {
    key: 'createTable',
    inputs: { tenant: 'acme', name: 'T', displayName: 'T', tags: [{ id: 'x', name: 'HR' }], fields: [{ name: 'ID', ordinal: 1 }] },
    expect: {
      method: 'POST',
      path: `${T}/tables`,
      body: { displayName: 'T', enableForAnalysis: false, name: 'T', tags: [{ id: 'x', name: 'HR' }], fields: [{ name: 'ID', ordinal: 1 }] },
    },
  },
  {
    key: 'updateTableById',
    inputs: { tenant: 'acme', tableId: 't1', description: 'x' },
    expect: { method: 'PUT', path: `${T}/tables/t1`, body: { description: 'x' } },
  },
  {
    key: 'listDataChanges',
    inputs: { tenant: 'acme', queryParams: { type: 'full' } },
    expect: { method: 'GET', path: `${T}/dataChanges`, query: { type: 'full', ...page } },
  },
  { key: 'getDataChangeById', inputs: { tenant: 'acme', dataChangeId: 'dc1' }, expect: { method: 'GET', path: `${T}/dataChanges/dc1` } },
  { key: 'createFileContainer', inputs: { tenant: 'acme' }, expect: { method: 'POST', path: `${T}/fileContainers` } },
  {
    key: 'getFilesByContainerId',
    inputs: { tenant: 'acme', fileContainerId: 'fc1' },
    expect: { method: 'GET', path: `${T}/fileContainers/fc1/files` },
  },
  {
    key: 'uploadFilesByContainerId',
    inputs: { tenant: 'acme', fileContainerId: 'fc1', file: 'a,b\n1,2\n' },
    expect: { method: 'POST', path: `${T}/fileContainers/fc1/files` },
  },
  // raw
  {
    key: 'rawRequest',
    inputs: { url: '/person/v4/people', method: 'GET', queryParameter: { limit: 1 } },
    expect: { method: 'GET', path: '/ccx/person/v4/people', query: { limit: '1' } },
  },
];

describe('HCM actions on the wire (table-driven)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('covers all 55 actions exactly once', () => {
    expect(hcmActions).toHaveLength(55);
    expect(rows.map((r) => `hcm.${r.key}`).sort()).toEqual(hcmActions.map((a) => a.key).sort());
  });

  it.each(rows.map((r) => [r.key, r] as const))('%s', async (_key, row) => {
    h.sb.clearRequests();
    try {
      await invoke(h, row.key, row.inputs);
    } catch (err) {
      // Made-up ids may be unknown to the sandbox: only HTTP answers are acceptable failures.
      expect(err).toBeInstanceOf(ActionError);
      expect((err as ActionError).details.status).toBeGreaterThanOrEqual(400);
    }
    const reqs = apiRequests(h);
    expect(reqs).toHaveLength(1);
    const r = reqs[0]!;
    expect(r.method).toBe(row.expect.method);
    expect(r.path).toBe(row.expect.path);
    expect(r.query).toEqual(row.expect.query ?? {});
    expect(r.headers.authorization).toMatch(/^Bearer \S+/);
    if (row.expect.body !== undefined) {
      expect(r.contentType).toMatch(/^application\/json/);
      expect(r.body).toEqual(row.expect.body);
    } else if (row.expect.method !== 'POST' || row.key === 'createFileContainer') {
      expect(r.body).toBeUndefined();
    }
  });
});
