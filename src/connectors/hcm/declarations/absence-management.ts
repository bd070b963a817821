import { arr, paged, queryParams, req, service, str } from './common-inputs.js';

const workerId = { workerId: req('Worker ID') };
const bpp = 'businessProcessParameters';

export const absenceManagementActions = service('absenceManagement', [
  {
    key: 'getTimeOffBalanceById',
    name: 'Get Time Off Balance by ID',
    inputs: { balanceId: req('Balance ID') },
    request: { method: 'GET', path: '/balances/{balanceId}' },
  },
  {
    key: 'getTimeOffDetails',
    name: 'Get Time Off Details',
    description: 'Time off entries for a worker; filters fromDate, toDate, status, timeOffType; all entries without query parameters.',
    inputs: { ...workerId, ...paged, ...queryParams },
    request: { method: 'GET', path: '/workers/{workerId}/timeOffDetails' },
  },
  {
    key: 'postTimeOffRequest',
    name: 'Post Time Off Request',
    inputs: {
      ...workerId,
      actionId: str('Action ID'),
      overallBusinessProcessId: str('Overall Business Process ID'),
      days: arr('Days', {
        required: true,
        description: 'Items: {date, start, end, position: {id}, reason: {id}, dailyQuantity?, comment?, timeOffType?: {id}}.',
        schema: { items: { type: 'object' } },
      }),
      timeOffComment: str('Time Off Comment'),
      transactionStatusId: str('Transaction Status ID'),
      timeOffAttachments: arr('Time Off Attachments'),
      timeOffForId: str('Time Off For ID'),
    },
    request: {
      method: 'POST',
      path: '/workers/{workerId}/requestTimeOff',
      body: {
        actionId: `${bpp}.action.id`,
        overallBusinessProcessId: `${bpp}.overallBusinessProcess.id`,
        timeOffComment: `${bpp}.comment`,
        transactionStatusId: `${bpp}.transactionStatus.id`,
        timeOffAttachments: `${bpp}.attachments`,
        timeOffForId: `${bpp}.for.id`,
        days: 'days',
      },
    },
  },
]);
