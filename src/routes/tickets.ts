import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { email, getStatement, idOf, listStatement, sortQuery, timestamp, type SortSpec } from './common.ts';

const ticketId = Joi.object({ ticket_id: idOf('tkt').required() });
const priority = Joi.string().valid('low', 'normal', 'high', 'urgent');
const tags = Joi.array().items(Joi.string().trim().min(1).max(50)).max(50).description('matched lower-cased');
const SORTS: Record<string, SortSpec<'api.tickets'>> = {
  created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' },
  updated_at: { expr: (eb) => eb.ref('updated_at'), type: 'timestamptz' },
};
const MESSAGE_SORTS: Record<string, SortSpec<'api.ticket_messages'>> = {
  created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' },
};

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number | null }>) {
  const { rows: [row] } = await q.execute(ctx.tx);
  if (!row) throw new ApiError('TICKET_NOT_FOUND', `no ticket ${ctx.params.ticket_id} in your organization`);
  return { body: row.doc, version: row.version ?? undefined };
}

const readCheck = api.call('require_tickets', false);
const moduleErrors = ['TICKET_MODULE_DISABLED'] as const;

export const ticketOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listTickets', method: 'GET', path: '/v1/tickets', tag: 'Tickets',
    summary: 'Tickets of the organization (member and manager; finance and hr where the organization grants them tickets)',
    query: Joi.object({
      status: Joi.string().pattern(/^[a-z][a-z0-9_]{0,40}$/),
      priority,
      assignee_member_id: email,
      project_id: idOf('prj'),
      requester_email: email,
      tag: Joi.string().trim().min(1).max(50),
      updated_since: timestamp,
      search: Joi.string().trim().min(1).max(200).description('full-text search (PostgreSQL, language-neutral) over subject, description and replies; internal notes too for member and manager'),
      ...sortQuery(SORTS, 'created_at', 'desc'),
    }),
    errors: [...moduleErrors],
    response: { status: 200, description: 'A page of tickets', schema: schemas.list(schemas.ticket) },
    statement: (ctx) => {
      const q = ctx.query;
      return listStatement(ctx, 'api.tickets', SORTS[q.sort]!, q.order, (eb) => {
        const where: Expression<SqlBool>[] = [];
        if (q.status) where.push(eb('status', '=', q.status));
        if (q.priority) where.push(eb('priority', '=', q.priority));
        if (q.assignee_member_id) where.push(eb('assignee_member_id', '=', sql<string>`app_private.normalize_email(${q.assignee_member_id})`));
        if (q.project_id) where.push(eb('project_id', '=', q.project_id));
        if (q.requester_email) where.push(eb('requester_email', '=', sql<string>`app_private.normalize_email(${q.requester_email})`));
        if (q.tag) where.push(eb('tags', '@>', sql<string[]>`array[${q.tag.toLowerCase()}]::text[]`));
        if (q.updated_since) where.push(eb('updated_at', '>=', sql<Date>`${q.updated_since}::timestamptz`));
        if (q.search) {
          const ids = api.call('ticket_search_ids', q.search);
          where.push(eb('id', 'in', sql<string>`(select ${ids})`));
        }
        return where;
      }, [readCheck]);
    },
  },
  {
    kind: 'command',
    operationId: 'createTicket', method: 'POST', path: '/v1/tickets', tag: 'Tickets', roles: ['manager'], idempotencyKey: true,
    summary: 'Create a ticket (status new, the next display number)',
    body: Joi.object({
      subject: Joi.string().min(1).max(500).pattern(/\S/).required(),
      description: Joi.string().max(50000).allow('', null),
      priority: priority.default('normal'),
      requester: Joi.object({ name: Joi.string().max(200).allow(null), email: email.required() }).required(),
      external_id: Joi.string().min(1).max(255).description('unique per API Client: a second ticket with it is 409 EXTERNAL_ID_CONFLICT'),
      tags,
    }),
    errors: [...moduleErrors, 'EXTERNAL_ID_CONFLICT'],
    response: { status: 201, description: 'The ticket', schema: schemas.ticket },
    command: ({ body }) => ({ statement: api.rows('ticket_create', body), location: '/v1/tickets/' }),
  },
  {
    kind: 'statement',
    operationId: 'getTicket', method: 'GET', path: '/v1/tickets/{ticket_id}', tag: 'Tickets', etag: true, params: ticketId,
    summary: 'One ticket, with the transitions it offers',
    errors: [...moduleErrors, 'TICKET_NOT_FOUND'],
    response: { status: 200, description: 'The ticket', schema: schemas.ticket },
    statement: ({ params }) => getStatement(api.rows('ticket_get', params.ticket_id),
      () => new ApiError('TICKET_NOT_FOUND', `no ticket ${params.ticket_id} in your organization`)),
  },
  {
    kind: 'handler',
    operationId: 'updateTicket', method: 'PATCH', path: '/v1/tickets/{ticket_id}', tag: 'Tickets', roles: ['manager'],
    ifMatch: true, etag: true, params: ticketId,
    summary: 'Change the supplied fields; status changes only through transitions (sending status is 409 INVALID_TRANSITION)',
    body: Joi.object({
      subject: Joi.string().min(1).max(500).pattern(/\S/),
      description: Joi.string().max(50000).allow('', null),
      priority,
      tags,
      assignee_member_id: email.allow(null).description('an active member of the organization'),
      project_id: idOf('prj').allow(null),
      // Read-only members a client may echo back from a GET: SQL answers IMMUTABLE_FIELD (status: INVALID_TRANSITION).
      ...Object.fromEntries(['id', 'object', 'number', 'status', 'requester', 'external_id', 'resolution', 'resolved_at', 'transitions',
        'version', 'created_at', 'updated_at'].map((k) => [k, Joi.any()])),
    }).min(1),
    fieldCodes: { '/assignee_member_id': 'INVALID_ASSIGNEE' },
    errors: [...moduleErrors, 'TICKET_NOT_FOUND', 'INVALID_ASSIGNEE', 'INVALID_TRANSITION', 'IMMUTABLE_FIELD', 'PROJECT_NOT_FOUND'],
    response: { status: 200, description: 'The ticket', schema: schemas.ticket },
    handler: (ctx) => one(ctx, api.rows('ticket_update', ctx.params.ticket_id, ctx.ifMatch, ctx.body)),
  },
  {
    kind: 'statement',
    operationId: 'listTicketMessages', method: 'GET', path: '/v1/tickets/{ticket_id}/messages', tag: 'Tickets', params: ticketId,
    summary: 'Replies and internal notes, oldest first (internal notes for member and manager only)',
    query: Joi.object({ ...sortQuery(MESSAGE_SORTS, 'created_at', 'asc') }),
    errors: [...moduleErrors, 'TICKET_NOT_FOUND'],
    response: { status: 200, description: 'A page of messages', schema: schemas.list(schemas.ticketMessage) },
    statement: (ctx) => {
      const id = ctx.params.ticket_id as string;
      return listStatement(ctx, 'api.ticket_messages', MESSAGE_SORTS.created_at!, ctx.query.order,
        (eb) => [eb('ticket_id', '=', id)], [readCheck, api.call('ticket_require', id)]);
    },
  },
  {
    kind: 'handler',
    operationId: 'createTicketMessage', method: 'POST', path: '/v1/tickets/{ticket_id}/messages', tag: 'Tickets', roles: ['manager'],
    idempotencyKey: true, params: ticketId,
    summary: 'Add a reply (emailed to the requester by the worker; its delivery shows on the message) or an internal note (never leaves the service)',
    body: Joi.object({
      type: Joi.string().valid('reply', 'internal_note').required(),
      body: Joi.string().min(1).max(50000).pattern(/\S/).required(),
      attachments: Joi.array().items(Joi.string().max(100)).max(20).unique()
        .description('ids of ready files linked to this ticket (upload them with linked_resource {type: ticket})'),
    }),
    fieldCodes: { '/attachments/*': 'ATTACHMENT_NOT_AVAILABLE' },
    errors: [...moduleErrors, 'TICKET_NOT_FOUND', 'ATTACHMENT_NOT_AVAILABLE'],
    response: { status: 201, description: 'The message', schema: schemas.ticketMessage },
    handler: async (ctx) => {
      const { rows: [row] } = await api.value('ticket_message_create', ctx.params.ticket_id, ctx.body).execute(ctx.tx);
      return { status: 201, body: row!.value };
    },
  },
  {
    kind: 'handler',
    operationId: 'transitionTicket', method: 'POST', path: '/v1/tickets/{ticket_id}/transitions', tag: 'Tickets', roles: ['manager'],
    etag: true, params: ticketId,
    summary: 'Apply a transition the ticket offers (resolve takes a resolution)',
    body: Joi.object({
      transition: Joi.string().pattern(/^[a-z][a-z0-9_]{0,40}$/).required(),
      resolution: Joi.string().min(1).max(10000).pattern(/\S/),
    }),
    fieldCodes: { '/transition': 'INVALID_TRANSITION' },
    errors: [...moduleErrors, 'TICKET_NOT_FOUND', 'INVALID_TRANSITION'],
    response: { status: 200, description: 'The ticket after the transition', schema: schemas.ticket },
    handler: (ctx) => one(ctx, api.rows('ticket_transition', ctx.params.ticket_id, ctx.body.transition, ctx.body.resolution ?? null)),
  },
];
