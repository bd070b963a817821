import type { InputDecl } from '../../types.js';
import { additionalFields, arr, flag, obj, queryParams, req, service, str } from './common-inputs.js';

const templateId = { messageTemplateId: req('Message Template ID') };
const templateInputs = (inactive: InputDecl) => ({
  createdById: str('Created By ID'),
  emailDetail: obj('Email Detail', { description: '{name, body, subject, replyTo}' }),
  pushDetail: obj('Push Detail', { description: '{redirectURL, message, id}' }),
  messageTemplateName: str('Message Template Name'),
  referenceId: str('Reference ID'),
  templateInactive: inactive,
  templateDescriptor: str('Template Descriptor'),
  templateId: str('Template ID'),
  ...additionalFields,
});
const templateBody = {
  createdById: 'createdBy.id',
  emailDetail: 'emailDetail',
  pushDetail: 'pushDetail',
  messageTemplateName: 'name',
  referenceId: 'referenceID',
  templateInactive: 'inactive',
  templateDescriptor: 'descriptor',
  templateId: 'id',
};

export const connectActions = service('connect', [
  { key: 'listMessageTemplates', name: 'List Message Templates', inputs: { ...queryParams }, request: { method: 'GET', path: '/messageTemplates' } },
  {
    key: 'getMessageTemplateById',
    name: 'Get Message Template by ID',
    inputs: templateId,
    request: { method: 'GET', path: '/messageTemplates/{messageTemplateId}' },
  },
  {
    key: 'createMessageTemplate',
    name: 'Create Message Template',
    inputs: templateInputs(flag('Template Inactive', { default: true })),
    request: { method: 'POST', path: '/messageTemplates', body: templateBody },
  },
  {
    key: 'updateMessageTemplateById',
    name: 'Update Message Template by ID',
    inputs: { ...templateId, ...templateInputs(flag('Template Inactive')) },
    request: { method: 'PUT', path: '/messageTemplates/{messageTemplateId}', body: templateBody },
  },
  {
    key: 'sendMessage',
    name: 'Send Message',
    inputs: {
      senderOverrideId: str('Sender Override ID', { description: "Overrides the sender's displayed icon." }),
      communicationId: str('Communication ID'),
      emailDetail: obj('Email Detail'),
      contacts: arr('Contacts', { description: 'Recipients: [{id, descriptor}].' }),
      messageTemplateId: str('Message Template ID'),
      notificationTypeId: str('Notification Type ID'),
      pushDetail: obj('Push Detail'),
    },
    request: {
      method: 'POST',
      path: '/sendMessage',
      body: {
        senderOverrideId: 'senderOverride.id',
        communicationId: 'commID.id',
        emailDetail: 'emailDetail',
        contacts: 'recipients',
        messageTemplateId: 'messageTemplate.id',
        notificationTypeId: 'notificationType.id',
        pushDetail: 'pushDetail',
      },
    },
  },
]);
