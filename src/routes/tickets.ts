import Joi from 'joi';
import { sql, type RawBuilder } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import type { SortSpec } from '../http/pagination.ts';
import { schemas } from './schemas.ts';
import { email, getStatement, idOf, listStatement, sortQuery, timestamp } from './common.ts';

const ticketId = Joi.object({ ticket_id: idOf('tkt').required() });
const priority = Joi.string().valid('low', 'normal', 'high', 'urgent');
const tags = Joi.array().items(Joi.string().trim().min(1).max(50)).max(50).description('matched lower-cased');
const SORTS: Record<string, SortSpec> = {
  created_at: { expr: 'created_at', type: 'timestamptz' },
  updated_at: { expr: 'updated_at', type: 'timestamptz' },
};

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number }>) {
  const { rows: [row] } = await q.execute(ctx.tx);
  if (!row) throw new ApiError('TICKET_NOT_FOUND', `no ticket ${ctx.params.ticket_id} in your organization`);
  return { body: row.doc, version: row.version };
}

const readCheck = sql`api.require_tickets(false)`;
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
      const where: RawBuilder<boolean>[] = [];
      if (q.status) where.push(sql`status = ${q.status}`);
      if (q.priority) where.push(sql`priority = ${q.priority}`);
      if (q.assignee_member_id) where.push(sql`assignee_member_id = app_private.normalize_email(${q.assignee_member_id})`);
      if (q.project_id) where.push(sql`project_id = ${q.project_id}`);
      if (q.requester_email) where.push(sql`requester_email = app_private.normalize_email(${q.requester_email})`);
      if (q.tag) where.push(sql`tags @> array[${q.tag.toLowerCase()}]::text[]`);
      if (q.updated_since) where.push(sql`updated_at >= ${q.updated_since}::timestamptz`);
      if (q.search) {
        where.push(sql`id in (select api.ticket_search_ids(${q.search}))`);
      }
      return listStatement(ctx, 'api.tickets', SORTS[q.sort]!, q.order, where, [readCheck]);
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
    command: ({ body }) => ({ statement: sql`select * from api.ticket_create(${body}::jsonb)`, location: '/v1/tickets/' }),
  },
  {
    kind: 'statement',
    operationId: 'getTicket', method: 'GET', path: '/v1/tickets/{ticket_id}', tag: 'Tickets', etag: true, params: ticketId,
    summary: 'One ticket, with the transitions it offers',
    errors: [...moduleErrors, 'TICKET_NOT_FOUND'],
    response: { status: 200, description: 'The ticket', schema: schemas.ticket },
    statement: ({ params }) => getStatement(sql`select * from api.ticket_get(${params.ticket_id})`,
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
    handler: (ctx) => one(ctx, sql`select * from api.ticket_update(${ctx.params.ticket_id}, ${`{${ctx.ifMatch.join(',')}}`}::integer[], ${ctx.body}::jsonb)`),
  },
  {
    kind: 'statement',
    operationId: 'listTicketMessages', method: 'GET', path: '/v1/tickets/{ticket_id}/messages', tag: 'Tickets', params: ticketId,
    summary: 'Replies and internal notes, oldest first (internal notes for member and manager only)',
    query: Joi.object({ ...sortQuery({ created_at: { expr: 'created_at', type: 'timestamptz' } }, 'created_at', 'asc') }),
    errors: [...moduleErrors, 'TICKET_NOT_FOUND'],
    response: { status: 200, description: 'A page of messages', schema: schemas.list(schemas.ticketMessage) },
    statement: (ctx) => {
      const id = ctx.params.ticket_id as string;
      return listStatement(ctx, 'api.ticket_messages', { expr: 'created_at', type: 'timestamptz' }, ctx.query.order,
        [sql`ticket_id = ${id}`], [readCheck, sql`api.ticket_require(${id})`]);
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
      const { rows: [row] } = await sql<{ doc: unknown }>`select api.ticket_message_create(${ctx.params.ticket_id}, ${ctx.body}::jsonb) as doc`.execute(ctx.tx);
      return { status: 201, body: row!.doc };
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
    handler: (ctx) => one(ctx, sql`select * from api.ticket_transition(${ctx.params.ticket_id}, ${ctx.body.transition}, ${ctx.body.resolution ?? null}::text)`),
  },
];
