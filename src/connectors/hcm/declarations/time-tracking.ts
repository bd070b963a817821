import { additionalFields, date, flag, instance, instanceBody, num, paged, queryParams, req, service, str } from './common-inputs.js';

const workerId = { workerId: req('Worker ID') };
const eventId = { timeClockEventId: req('Time Clock Event ID') };
const blockId = { workerTimeBlockId: req('Worker Time Block ID') };
const blockBody = { doNotBill: 'doNotBill', comment: 'comment', instanceId: 'id', instanceDescriptor: 'descriptor' };

export const timeTrackingActions = service('timeTracking', [
  { key: 'listWorkers', name: 'List Workers', inputs: { ...paged, ...queryParams }, request: { method: 'GET', path: '/workers' } },
  { key: 'getWorkerById', name: 'Get Worker by ID', inputs: workerId, request: { method: 'GET', path: '/workers/{workerId}' } },
  {
    key: 'getTimeClockEvents',
    name: 'Get Time Clock Events',
    description: 'Time clock events, filterable by worker and date range (worker, fromDate, toDate).',
    inputs: { ...queryParams },
    request: { method: 'GET', path: '/timeClockEvents' },
  },
  {
    key: 'getTimeClockEventById',
    name: 'Get Time Clock Event by ID',
    inputs: eventId,
    request: { method: 'GET', path: '/timeClockEvents/{timeClockEventId}' },
  },
  {
    key: 'updateTimeClockEventById',
    name: 'Update Time Clock Event by ID',
    description: 'Replaces the existing event with the given data (PUT).',
    inputs: {
      ...eventId,
      clockEventDateTime: date('Clock Event Date Time'),
      clockEventTimeZoneId: str('Clock Event Time Zone ID'),
      clockEventOverrideRate: num('Clock Event Override Rate'),
      referenceId: str('Reference ID'),
      clockEventTimeEntryCodeId: str('Clock Event Time Entry Code ID'),
      clockEventProjectPlanTaskId: str('Clock Event Project Plan Task ID'),
      clockEventProjectId: str('Clock Event Project ID'),
      clockEventComment: str('Clock Event Comment'),
      ...additionalFields,
      ...instance(),
    },
    request: {
      method: 'PUT',
      path: '/timeClockEvents/{timeClockEventId}',
      body: {
        clockEventDateTime: 'dateTime',
        clockEventTimeZoneId: 'timeZone.id',
        clockEventOverrideRate: 'overrideRate',
        referenceId: 'reference_ID',
        clockEventTimeEntryCodeId: 'timeEntryCode.id',
        clockEventProjectPlanTaskId: 'projectPlanTask.id',
        clockEventProjectId: 'project.id',
        clockEventComment: 'comment',
        ...instanceBody(),
      },
    },
  },
  {
    key: 'deleteTimeClockEventById',
    name: 'Delete Time Clock Event by ID',
    inputs: eventId,
    request: { method: 'DELETE', path: '/timeClockEvents/{timeClockEventId}' },
  },
  {
    key: 'createWorkerTimeBlock',
    name: 'Create Worker Time Block',
    inputs: { ...workerId, doNotBill: flag('Do Not Bill', { default: false }), comment: str('Comment'), ...instance(false), ...additionalFields },
    request: { method: 'POST', path: '/workers/{workerId}/workerTimeBlock', body: blockBody },
  },
  {
    key: 'updateWorkerTimeBlock',
    name: 'Update Worker Time Block',
    inputs: { ...blockId, ...workerId, doNotBill: flag('Do Not Bill'), comment: str('Comment'), ...instance(false), ...additionalFields },
    request: { method: 'PATCH', path: '/workers/{workerId}/workerTimeBlock/{workerTimeBlockId}', body: blockBody },
  },
  {
    key: 'deleteWorkerTimeBlock',
    name: 'Delete Worker Time Block',
    inputs: { ...workerId, ...blockId },
    request: { method: 'DELETE', path: '/workers/{workerId}/workerTimeBlock/{workerTimeBlockId}' },
  },
]);
