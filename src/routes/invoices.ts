import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { api, build } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { date, getStatement, idOf, listStatement, sortQuery, type SortSpec } from './common.ts';
import type { InvoicePdfInput } from '../invoices/pdf.ts';

const invoiceId = Joi.object({ invoice_id: idOf('inv').required() });
const currency = Joi.string().pattern(/^[A-Z]{3}$/).message('currency: an ISO 4217 code in capitals');
// Lines are checked in SQL, all together, so every problem comes back with its pointer
// (INVALID_INVOICE_LINE), client-supplied amounts included.
const lines = Joi.array().items(Joi.object().unknown(true)).max(200)
  .description('each: description, quantity (decimal string), unit_price (decimal string, at most the currency\'s minor units), tax_rate (percent, decimal string, optional)');
const calculated = Object.fromEntries(['subtotal', 'tax_total', 'total', 'amount_due', 'amount_paid']
  .map((k) => [k, Joi.forbidden().messages({ 'any.unknown': `${k} is calculated by the service; client-supplied totals are rejected` })]));
const writable = {
  customer_id: idOf('cus'),
  currency,
  issue_date: date.allow(null),
  due_date: date.allow(null),
  memo: Joi.string().max(5000).allow('', null),
  lines,
  ...calculated,
};
const money = Joi.string().pattern(/^\d{1,12}(\.\d{1,4})?$/).pattern(/[1-9]/).message('amount: a positive decimal string');

const SORTS: Record<string, SortSpec<'api.invoices'>> = { created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' } };

type Row = { doc: unknown; version: number | null };

function found(ctx: OperationContext, row: Row | undefined) {
  if (!row) throw new ApiError('INVOICE_NOT_FOUND', `no invoice ${ctx.params.invoice_id} in your organization`);
  return { body: row.doc, version: row.version ?? undefined };
}

async function one(ctx: OperationContext, q: RawBuilder<Row>) {
  const { rows: [row] } = await q.execute(ctx.tx);
  return found(ctx, row);
}

const roles = ['manager', 'finance'] as const;

export const invoiceOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listInvoices', method: 'GET', path: '/v1/invoices', tag: 'Invoicing', roles,
    summary: 'Invoices of the organization',
    query: Joi.object({
      status: Joi.string().valid('draft', 'sent', 'paid', 'void'),
      customer_id: idOf('cus'),
      currency,
      issued_after: date, issued_before: date, due_after: date, due_before: date,
      search: Joi.string().trim().min(1).max(100).description('part of the invoice number'),
      ...sortQuery(SORTS, 'created_at', 'desc'),
    }),
    response: { status: 200, description: 'A page of invoices', schema: schemas.list(schemas.invoice) },
    statement: (ctx) => {
      const q = ctx.query;
      return listStatement(ctx, 'api.invoices', SORTS.created_at!, q.order, (eb) => {
        const where: Expression<SqlBool>[] = [];
        if (q.status) where.push(eb('status', '=', q.status));
        if (q.customer_id) where.push(eb('customer_id', '=', q.customer_id));
        if (q.currency) where.push(eb('currency', '=', q.currency));
        if (q.issued_after) where.push(eb('issue_date', '>=', sql<Date>`${q.issued_after}::date`));
        if (q.issued_before) where.push(eb('issue_date', '<=', sql<Date>`${q.issued_before}::date`));
        if (q.due_after) where.push(eb('due_date', '>=', sql<Date>`${q.due_after}::date`));
        if (q.due_before) where.push(eb('due_date', '<=', sql<Date>`${q.due_before}::date`));
        if (q.search) where.push(sql<SqlBool>`strpos(lower(${eb.ref('number')}), ${q.search.toLowerCase()}) > 0`);
        return where;
      });
    },
  },
  {
    kind: 'command',
    operationId: 'createInvoice', method: 'POST', path: '/v1/invoices', tag: 'Invoicing', roles, idempotencyKey: true,
    summary: 'A draft invoice; line amounts and totals are calculated by the service',
    body: Joi.object({ ...writable, customer_id: writable.customer_id.required() }),
    fieldCodes: { '/lines/*': 'INVALID_INVOICE_LINE' },
    errors: ['INVALID_INVOICE_LINE', 'CURRENCY_MISMATCH', 'RESOURCE_NOT_FOUND'],
    response: { status: 201, description: 'The draft invoice', schema: schemas.invoice },
    command: ({ body }) => ({ statement: api.rows('invoice_create', body), location: '/v1/invoices/' }),
  },
  {
    kind: 'statement',
    operationId: 'getInvoice', method: 'GET', path: '/v1/invoices/{invoice_id}', tag: 'Invoicing', roles, etag: true,
    summary: 'One invoice with its lines', params: invoiceId,
    errors: ['INVOICE_NOT_FOUND'],
    response: { status: 200, description: 'The invoice', schema: schemas.invoice },
    statement: ({ params }) => getStatement(build.selectFrom('api.invoices').select(['doc', 'version']).where('id', '=', params.invoice_id),
      () => new ApiError('INVOICE_NOT_FOUND', `no invoice ${params.invoice_id} in your organization`)),
  },
  {
    kind: 'handler',
    operationId: 'updateInvoice', method: 'PATCH', path: '/v1/invoices/{invoice_id}', tag: 'Invoicing', roles,
    ifMatch: true, etag: true, params: invoiceId,
    summary: 'Change the supplied fields of a draft (lines, when supplied, replace all lines)',
    body: Joi.object(writable).min(1),
    fieldCodes: { '/lines/*': 'INVALID_INVOICE_LINE' },
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_EDITABLE', 'INVALID_INVOICE_LINE', 'IMMUTABLE_FIELD', 'CURRENCY_MISMATCH', 'RESOURCE_NOT_FOUND'],
    response: { status: 200, description: 'The invoice', schema: schemas.invoice },
    handler: (ctx) => one(ctx, api.rows('invoice_update', ctx.params.invoice_id, ctx.ifMatch, ctx.body)),
  },
  {
    kind: 'handler',
    operationId: 'replaceInvoiceLines', method: 'PUT', path: '/v1/invoices/{invoice_id}/lines', tag: 'Invoicing', roles,
    ifMatch: true, etag: true, params: invoiceId,
    summary: 'Replace every line of a draft, atomically: the whole validated set or nothing',
    body: Joi.object({ lines: lines.required() }),
    fieldCodes: { '/lines/*': 'INVALID_INVOICE_LINE' },
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_EDITABLE', 'INVALID_INVOICE_LINE'],
    response: { status: 200, description: 'The invoice', schema: schemas.invoice },
    handler: (ctx) => one(ctx, api.rows('invoice_replace_lines', ctx.params.invoice_id, ctx.ifMatch, ctx.body.lines)),
  },
  {
    kind: 'handler',
    operationId: 'sendInvoice', method: 'POST', path: '/v1/invoices/{invoice_id}/send', tag: 'Invoicing', roles,
    idempotencyKey: true, etag: true, params: invoiceId, bodyOptional: true,
    summary: 'Issue a draft: the next invoice number, a PDF stored as a file linked to the invoice, and (unless delivery.email is false) an email with the PDF to the customer\'s delivery address. If the mail provider refuses, nothing changes: the invoice stays a draft and no number is used.',
    body: Joi.object({
      delivery: Joi.object({ email: Joi.boolean().strict().default(true).description('email the PDF to the customer (default true)') }),
      message: Joi.string().max(2000).allow('').description('a note placed above the invoice summary in the email'),
    }),
    concurrency: (app) => app.invoiceSends,
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_EDITABLE', 'WORKFLOW_BLOCKED', 'CUSTOMER_DELIVERY_DETAILS_MISSING', 'ACCOUNTING_CONNECTION_NOT_READY', 'EMAIL_DELIVERY_REFUSED', 'EMAIL_DELIVERY_UNAVAILABLE'],
    response: { status: 200, description: 'The issued invoice (status sent)', schema: schemas.invoice },
    handler: async (ctx) => {
      const id = ctx.params.invoice_id as string;
      const email = ctx.body.delivery?.email !== false;
      // Issue and attach in this transaction, then hand the email over before it commits: a refused
      // email rolls back the number, the PDF and the status together.
      // A cold PDF thread starts before the number is taken, not while its counter is locked.
      await ctx.app.pdf.warm();
      const { rows: [issued] } = await api.value('invoice_send', id, email).execute(ctx.tx);
      const data = issued!.value as unknown as InvoicePdfInput;
      const pdf = await ctx.app.pdf.render(data);
      const filename = `${data.invoice.number.replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`;
      await api.value('invoice_attach_pdf', id, filename, pdf).execute(ctx.tx);
      if (email) {
        const { invoice, organization, customer } = data;
        await ctx.app.mailer.send({
          to: customer.email!,
          fromName: organization.name,
          subject: `Invoice ${invoice.number} from ${organization.name}`,
          text: [ctx.body.message, `Invoice ${invoice.number} from ${organization.name}`,
            `Amount due: ${invoice.amount_due} ${invoice.currency}, due ${invoice.due_date}.`,
            'The invoice is attached as a PDF.'].filter(Boolean).join('\n\n'),
          attachments: [{ filename, content: pdf, contentType: 'application/pdf' }],
        });
      }
      return found(ctx, await ctx.tx.selectFrom('api.invoices').select(['doc', 'version']).where('id', '=', id).executeTakeFirst());
    },
  },
  {
    kind: 'handler',
    operationId: 'voidInvoice', method: 'POST', path: '/v1/invoices/{invoice_id}/void', tag: 'Invoicing', roles,
    idempotencyKey: true, etag: true, params: invoiceId,
    summary: 'Void an issued invoice without payments (it stays, status void, nothing due); a void invoice is returned as is',
    errors: ['INVOICE_NOT_FOUND', 'WORKFLOW_BLOCKED', 'ACCOUNTING_CONNECTION_NOT_READY'],
    response: { status: 200, description: 'The void invoice', schema: schemas.invoice },
    handler: (ctx) => one(ctx, api.rows('invoice_void', ctx.params.invoice_id)),
  },
  {
    kind: 'handler',
    operationId: 'createPayment', method: 'POST', path: '/v1/payments', tag: 'Invoicing', roles, idempotencyKey: true,
    summary: 'Record a payment received outside the service (charges nothing)',
    body: Joi.object({
      invoice_id: idOf('inv').required(),
      amount: money.required(),
      currency: currency.required(),
      received_date: date.required(),
      method: Joi.string().min(1).max(50).required(),
      external_reference: Joi.string().max(255).allow(null),
    }),
    errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_EDITABLE', 'CURRENCY_MISMATCH', 'PAYMENT_EXCEEDS_AMOUNT_DUE'],
    response: { status: 201, description: 'The payment and the invoice after it', schema: Joi.object().unknown(true).label('Payment') },
    handler: async (ctx) => {
      const { rows: [row] } = await api.rows('payment_create', ctx.body).execute(ctx.tx);
      return { status: 201, body: row!.doc };
    },
  },
];
