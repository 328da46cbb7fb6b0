// Conversations (spec "Conversations"): a client's chat with the assistant. A message starts a chat
// run (src/agents/engine.ts, model adapter src/agents/model.ts) acting as the client; the reply is
// appended by the database when the run ends. Working-context budgets: docs/decisions.md.
import Joi from 'joi';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { schemaErrors } from '../http/json-schema.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { email, freeJson, getStatement, idOf, listStatement, metadata, timestamp } from './common.ts';
import { listQuery } from '../http/pagination.ts';

const conversationId = Joi.object({ conversation_id: idOf('cnv').required() });

const only = (props: Record<string, object>, required: string[]) =>
  ({ required, additionalProperties: false, properties: { type: {}, ...props } });
/** The blocks a client may send (`error` blocks are the service's own). */
export const CONTENT_SCHEMA = {
  type: 'array', minItems: 1, maxItems: 50,
  items: {
    type: 'object', required: ['type'],
    properties: { type: { enum: ['text', 'data', 'file_reference', 'citation'] } },
    allOf: [
      { if: { properties: { type: { const: 'text' } } }, then: only({ text: { type: 'string', minLength: 1 } }, ['text']) },
      { if: { properties: { type: { const: 'data' } } }, then: only({ data: { type: 'object' }, label: { type: 'string', maxLength: 200 } }, ['data']) },
      { if: { properties: { type: { const: 'file_reference' } } },
        then: only({ file_id: { type: 'string', pattern: '^fil_[A-Za-z0-9]{1,64}$' } }, ['file_id']) },
      { if: { properties: { type: { const: 'citation' } } }, then: only({ text: { type: 'string', minLength: 1, maxLength: 2000 },
        source: { type: 'object', required: ['type', 'id'], additionalProperties: false,
          properties: { type: { type: 'string', maxLength: 40 }, id: { type: 'string', maxLength: 100 } } } }, ['text', 'source']) },
    ],
  },
};

function checkContent(content: unknown) {
  const errors = schemaErrors('conversation:content', CONTENT_SCHEMA, content, '/content', 'MESSAGE_CONTENT_INVALID')
    .filter((e) => !e.detail.endsWith('must match "then" schema'))
    .map((e) => (/\/type$/.test(e.pointer) && e.detail.includes('allowed values')
      ? { ...e, detail: `${e.pointer.slice(1)} must be text, data, file_reference or citation (error blocks are written by the service)` } : e));
  if (errors.length) {
    throw new ApiError('MESSAGE_CONTENT_INVALID', errors.length === 1 ? errors[0]!.detail : `${errors.length} problems; see errors`, { errors });
  }
}

const notFound = (id: string) => () => new ApiError('CONVERSATION_NOT_FOUND', `no conversation ${id} of your client`);

export const conversationOperations: Operation[] = [
  {
    kind: 'handler',
    operationId: 'createConversation', method: 'POST', path: '/v1/conversations', tag: 'Conversations', idempotencyKey: true,
    summary: 'Start a conversation; its subject (one member) is fixed for its life',
    body: Joi.object({
      title: Joi.string().max(200).allow(null, '').default(null),
      subject: freeJson(Joi.object().unknown(true), { bytes: 4096, depth: 4 }).allow(null).default(null)
        .description('{"member_id": "<email>"} or {"display_name": "<name>"} of an active member; null for none'),
      metadata: metadata.default({}),
    }),
    bodyOptional: true,
    errors: ['SUBJECT_NOT_FOUND', 'SUBJECT_AMBIGUOUS', 'SUBJECT_NOT_SUPPORTED'],
    response: { status: 201, description: 'The conversation', schema: schemas.conversation },
    handler: async (ctx) => {
      const { rows: [r] } = await api.value('conversation_create', ctx.body.title, ctx.body.subject, ctx.body.metadata)
        .execute(ctx.tx);
      const doc = r!.value as { id: string };
      return { status: 201, body: doc, headers: { Location: `/v1/conversations/${doc.id}` } };
    },
  },
  {
    kind: 'statement',
    operationId: 'listConversations', method: 'GET', path: '/v1/conversations', tag: 'Conversations',
    summary: 'The calling client\'s conversations, most recently updated first',
    query: Joi.object({
      status: Joi.string().valid('active', 'archived'),
      subject_member_id: email,
      updated_after: timestamp,
      ...listQuery,
    }),
    response: { status: 200, description: 'A page of conversations', schema: schemas.list(schemas.conversation) },
    statement: (ctx) => listStatement(ctx, 'api.conversations', { expr: (eb) => eb.ref('updated_at'), type: 'timestamptz' }, 'desc',
      (eb): Expression<SqlBool>[] => [
        ...(ctx.query.status ? [eb('status', '=', ctx.query.status)] : []),
        ...(ctx.query.subject_member_id ? [eb('subject_member_id', '=', ctx.query.subject_member_id.trim().toLowerCase())] : []),
        ...(ctx.query.updated_after ? [eb('updated_at', '>', sql<Date>`${ctx.query.updated_after}::timestamptz`)] : []),
      ]),
  },
  {
    kind: 'statement',
    operationId: 'getConversation', method: 'GET', path: '/v1/conversations/{conversation_id}', tag: 'Conversations', params: conversationId,
    summary: 'One of the calling client\'s conversations (others: CONVERSATION_NOT_FOUND)',
    errors: ['CONVERSATION_NOT_FOUND'],
    response: { status: 200, description: 'The conversation', schema: schemas.conversation },
    statement: ({ params }) => getStatement(api.rows('conversation_get', params.conversation_id), notFound(params.conversation_id)),
  },
  {
    kind: 'statement',
    operationId: 'listConversationMessages', method: 'GET', path: '/v1/conversations/{conversation_id}/messages', tag: 'Conversations',
    params: conversationId,
    summary: 'The whole history, oldest first (clearing or expiring the working context keeps it)',
    query: Joi.object({ ...listQuery }),
    errors: ['CONVERSATION_NOT_FOUND'],
    response: { status: 200, description: 'A page of messages', schema: schemas.list(schemas.conversationMessage) },
    statement: (ctx) => {
      const conversation = api.rows('conversation_get', ctx.params.conversation_id);
      return listStatement(ctx, 'api.conversation_messages', { expr: (eb) => eb.ref('seq'), type: 'integer' }, 'asc',
        (eb) => [eb('conversation_id', '=', ctx.params.conversation_id)], [sql`exists (${conversation})`]);
    },
  },
  {
    kind: 'handler',
    operationId: 'createConversationMessage', method: 'POST', path: '/v1/conversations/{conversation_id}/messages', tag: 'Conversations',
    idempotencyKey: true, params: conversationId,
    summary: 'Send a message: 202 with it and the chat run that answers (as this client, with the skills its Roles allow); the reply is appended when the run ends (conversation.message.created)',
    // Over the byte bound a message is over its working-context budget too (app_private.message_budget(),
    // 16,000 characters; test/http/conversations.test.ts holds the two apart): CONTEXT_LIMIT_EXCEEDED.
    body: Joi.object({ content: freeJson(Joi.any().description('an array of blocks: text, data, file_reference, citation'),
      { bytes: 262_144, depth: 8, overBytes: 'CONTEXT_LIMIT_EXCEEDED' }).required() }),
    fieldCodes: { '/content': 'MESSAGE_CONTENT_INVALID' },
    errors: ['CONVERSATION_NOT_FOUND', 'CONVERSATION_ARCHIVED', 'MESSAGE_CONTENT_INVALID', 'CONTEXT_LIMIT_EXCEEDED'],
    response: { status: 202, description: 'The message and its run', schema: Joi.object({
      object: Joi.string().valid('conversation_message_accepted').required(),
      message: schemas.conversationMessage.required(),
      run: schemas.run.required(),
    }).label('ConversationMessageAccepted') },
    handler: async (ctx) => {
      checkContent(ctx.body.content);
      const { rows: [r] } = await api.value('conversation_message_create', ctx.params.conversation_id, ctx.body.content)
        .execute(ctx.tx);
      return { status: 202, body: r!.value };
    },
  },
  {
    kind: 'handler',
    operationId: 'archiveConversation', method: 'POST', path: '/v1/conversations/{conversation_id}/archive', tag: 'Conversations',
    idempotencyKey: true, params: conversationId,
    summary: 'Archive: everything is kept for audit; new messages are refused (CONVERSATION_ARCHIVED). Archiving an archived conversation changes nothing',
    errors: ['CONVERSATION_NOT_FOUND'],
    response: { status: 200, description: 'The conversation', schema: schemas.conversation },
    handler: async (ctx) => {
      const { rows: [r] } = await api.rows('conversation_archive', ctx.params.conversation_id).execute(ctx.tx);
      return { body: r!.doc };
    },
  },
  {
    kind: 'handler',
    operationId: 'clearConversationContext', method: 'POST', path: '/v1/conversations/{conversation_id}/clear-context', tag: 'Conversations',
    idempotencyKey: true, params: conversationId,
    summary: 'Start the working context afresh: the history stays, earlier messages are no longer shown to the model',
    errors: ['CONVERSATION_NOT_FOUND'],
    response: { status: 200, description: 'The conversation', schema: schemas.conversation },
    handler: async (ctx) => {
      const { rows: [r] } = await api.rows('conversation_clear_context', ctx.params.conversation_id).execute(ctx.tx);
      return { body: r!.doc };
    },
  },
];
