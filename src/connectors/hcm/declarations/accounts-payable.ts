import { additionalFields, paged, queryParams, req, service, str } from './common-inputs.js';

const sirId = { supplierInvoiceRequestId: req('Supplier Invoice Request ID') };

export const accountsPayableActions = service('accountsPayable', [
  {
    key: 'listSupplierInvoiceRequests',
    name: 'List Supplier Invoice Requests',
    inputs: { ...paged, ...queryParams },
    request: { method: 'GET', path: '/supplierInvoiceRequests' },
  },
  {
    key: 'getSupplierInvoiceRequestById',
    name: 'Get Supplier Invoice Request by ID',
    inputs: sirId,
    request: { method: 'GET', path: '/supplierInvoiceRequests/{supplierInvoiceRequestId}' },
  },
  {
    key: 'getSupplierInvoiceRequestAttachments',
    name: 'Get Supplier Invoice Request Attachments',
    inputs: { ...sirId, ...paged },
    request: { method: 'GET', path: '/supplierInvoiceRequests/{supplierInvoiceRequestId}/attachments' },
  },
  {
    key: 'createSupplierInvoiceRequest',
    name: 'Create Supplier Invoice Request',
    inputs: {
      currencyId: str('Currency ID'),
      companyId: str('Company ID'),
      taxAmount: str('Tax Amount'),
      requesterId: str('Requester ID'),
      controlTotalAmount: str('Control Total Amount', { description: 'Expected total used to validate line totals.' }),
      paymentTermsId: str('Payment Terms ID'),
      referenceTypeId: str('Reference Type ID'),
      memo: str('Memo'),
      supplierInvoiceId: str('Supplier Invoice ID'),
      supplierInvoiceDescriptor: str('Supplier Invoice Descriptor'),
      ...additionalFields,
    },
    request: {
      method: 'POST',
      path: '/supplierInvoiceRequests',
      body: {
        currencyId: 'currency.id',
        companyId: 'company.id',
        taxAmount: 'taxAmount',
        requesterId: 'requester.id',
        controlTotalAmount: 'controlTotalAmount',
        paymentTermsId: 'paymentTerms.id',
        referenceTypeId: 'referenceType.id',
        memo: 'memo',
        supplierInvoiceId: 'id',
        supplierInvoiceDescriptor: 'descriptor',
      },
    },
  },
  {
    key: 'createSupplierInvoiceRequestAttachment',
    name: 'Create Supplier Invoice Request Attachment',
    inputs: {
      ...sirId,
      fileLength: str('File Length', { description: 'Bytes (sent as a string).' }),
      contentTypeId: str('Content Type ID', { description: 'MIME type.' }),
      fileName: str('File Name'),
      supplierInvoiceRequestAttachmentDescriptor: str('Supplier Invoice Request Attachment Descriptor'),
      supplierInvoiceRequestAttachmentId: str('Supplier Invoice Request Attachment ID'),
    },
    request: {
      method: 'POST',
      path: '/supplierInvoiceRequests/{supplierInvoiceRequestId}/attachments',
      body: {
        fileLength: 'fileLength',
        contentTypeId: 'contentType.id',
        fileName: 'fileName',
        supplierInvoiceRequestAttachmentDescriptor: 'descriptor',
        supplierInvoiceRequestAttachmentId: 'id',
      },
    },
  },
  {
    key: 'submitSupplierInvoiceRequest',
    name: 'Submit Supplier Invoice Request',
    description: 'Submits a supplier invoice request for approval.',
    inputs: {
      ...sirId,
      supplierInvoiceInstanceId: str('Supplier Invoice Instance ID'),
      supplierInvoiceInstanceDescriptor: str('Supplier Invoice Instance Descriptor'),
    },
    request: {
      method: 'POST',
      path: '/supplierInvoiceRequests/{supplierInvoiceRequestId}/submit',
      body: { supplierInvoiceInstanceId: 'id', supplierInvoiceInstanceDescriptor: 'descriptor' },
    },
  },
]);
