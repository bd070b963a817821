import { date, flag, queryParams, req, service, str } from './common-inputs.js';

export const customerAccountsActions = service('customerAccounts', [
  { key: 'listInvoices', name: 'List Invoices', description: 'Customer invoices and adjustments (billToCustomer, company, invoiceStatus, …).',
    inputs: { ...queryParams }, request: { method: 'GET', path: '/invoices' } },
  { key: 'getInvoiceById', name: 'Get Invoice by ID', inputs: { invoiceId: req('Invoice ID') },
    request: { method: 'GET', path: '/invoices/{invoiceId}' } },
  { key: 'getInvoicePdf', name: 'Get Invoice PDF', description: 'Printed customer invoice document, returned as a binary value.',
    inputs: { invoicePdfId: req('Invoice PDF ID') }, request: { method: 'GET', path: '/invoicePDFs/{invoicePdfId}', binary: true } },
  { key: 'getPaymentById', name: 'Get Payment by ID', inputs: { paymentId: req('Payment ID') },
    request: { method: 'GET', path: '/payments/{paymentId}' } },
  { key: 'createPayment', name: 'Create Payment', description: 'Creates one customer invoice payment header.',
    inputs: { remitFromCustomerId: str('Remit From Customer ID'), readyToAutoApply: flag('Ready to Auto Apply', { default: true }),
      reference: str('Reference'), transactionNumber: str('Transaction Number'), amount: str('Amount', { description: 'Sent as a string.' }),
      typeId: str('Type ID'), paymentDate: date('Payment Date'), companyId: str('Company ID'), memo: str('Memo'),
      paymentDescriptor: str('Payment Descriptor'), paymentId: str('Payment ID', { description: 'Optional identifier to assign on creation.' }) },
    request: { method: 'POST', path: '/payments',
      body: { remitFromCustomerId: 'remitFromCustomer.id', readyToAutoApply: 'readyToAutoApply', reference: 'reference',
        transactionNumber: 'transactionNumber', amount: 'amount', typeId: 'type.id', paymentDate: 'date', companyId: 'company.id',
        memo: 'memo', paymentDescriptor: 'descriptor', paymentId: 'id' } } },
]);
