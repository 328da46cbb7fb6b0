import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import {
  customFields, email, getStatement, idOf, listStatement, schemaVersionOf, sortQuery, subject, timestamp, type SortSpec,
} from './common.ts';

const taskId = Joi.object({ task_id: idOf('tsk').required() });
const priority = Joi.string().valid('low', 'medium', 'high', 'urgent');

const writable = {
  code: Joi.string().pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/).allow(null),
  name: Joi.string().min(1).max(500).pattern(/\S/),
  description: Joi.string().max(20000).allow('', null),
  priority,
  start_at: timestamp.allow(null),
  due_at: timestamp.allow(null),
  assignee_member_ids: Joi.array().items(email).max(50),
  custom_fields: customFields,
};
const echoed = Object.fromEntries(['id', 'object', 'organization_id', 'project_id', 'status', 'created_at', 'updated_at',
  'version', 'predecessor_task_ids', 'transitions', 'completed_at', 'archived'].map((k) => [k, Joi.any()]));

export const TASK_SORTS: Record<string, SortSpec<'api.tasks'>> = {
  created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' },
  updated_at: { expr: (eb) => eb.ref('updated_at'), type: 'timestamptz' },
  due_at: { expr: (eb) => sql`coalesce(${eb.ref('due_at')}, 'infinity'::timestamptz)`, type: 'timestamptz' },
  name: { expr: (eb) => eb.fn('lower', [eb.ref('name')]), type: 'text' },
  priority: { expr: (eb) => sql`array_position(array['low','medium','high','urgent'], ${eb.ref('priority')})`, type: 'integer' },
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number | null }>, status = 200) {
  const { rows: [row] } = await q.execute(ctx.tx);
  if (!row) throw new ApiError('TASK_NOT_FOUND', `no task ${ctx.params.task_id} in your organization`);
  return { body: row.doc, version: row.version ?? undefined, status };
}

export const taskOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listTasks', method: 'GET', path: '/v1/tasks', tag: 'Tasks',
    summary: 'Tasks of the organization (archived ones with archived=true)',
    query: Joi.object({
      project_id: idOf('prj'),
      status: Joi.string().pattern(/^[a-z][a-z0-9_]{0,40}$/),
      assignee_member_id: email,
      priority,
      due_before: timestamp,
      due_after: timestamp,
      search: Joi.string().trim().min(1).max(200).description('part of the name or code'),
      archived: Joi.boolean().default(false),
      ...sortQuery(TASK_SORTS, 'created_at', 'desc'),
    }),
    response: { status: 200, description: 'A page of tasks', schema: schemas.list(schemas.task) },
    statement: (ctx) => {
      const { query } = ctx;
      // Filtering or sorting by a field the caller's Roles cannot read would reveal it: the database refuses.
      const checks: RawBuilder<unknown>[] = [];
      if (query.assignee_member_id) checks.push(api.call('require_any_role', ['member', 'manager', 'hr'], 'filtering tasks by assignee'));
      if (query.priority || query.sort === 'priority') checks.push(api.call('require_any_role', ['member', 'manager'], 'filtering or sorting tasks by priority'));
      if (query.due_before || query.due_after || query.sort === 'due_at') checks.push(api.call('require_any_role', ['member', 'manager', 'hr'], 'filtering or sorting tasks by due_at'));
      return listStatement(ctx, 'api.tasks', TASK_SORTS[query.sort]!, query.order, (eb) => {
        const where: Expression<SqlBool>[] = [eb('archived_at', query.archived ? 'is not' : 'is', null)];
        if (query.project_id) where.push(eb('project_id', '=', query.project_id));
        if (query.status) where.push(eb('status', '=', query.status));
        if (query.assignee_member_id) where.push(eb('assignee_member_ids', '@>', sql<string[]>`array[app_private.normalize_email(${query.assignee_member_id})]`));
        if (query.priority) where.push(eb('priority', '=', query.priority));
        if (query.due_before) where.push(eb('due_at', '<', sql<Date>`${query.due_before}::timestamptz`));
        if (query.due_after) where.push(eb('due_at', '>', sql<Date>`${query.due_after}::timestamptz`));
        if (query.search) {
          const like = `%${escapeLike(query.search.toLowerCase())}%`;
          where.push(eb.or([eb(eb.fn('lower', [eb.ref('name')]), 'like', like), eb(sql`lower(coalesce(${eb.ref('code')}, ''))`, 'like', like)]));
        }
        return where;
      }, checks);
    },
  },
  {
    kind: 'command',
    operationId: 'createTask', method: 'POST', path: '/v1/tasks', tag: 'Tasks',
    summary: 'Create a task in its workflow\'s initial status', roles: ['manager'], idempotencyKey: true, schemaVersion: true,
    body: Joi.object({ ...writable, project_id: idOf('prj').required(), name: writable.name.required() }),
    fieldCodes: { '/assignee_member_ids/*': 'INVALID_ASSIGNEE', '/custom_fields': 'INVALID_CUSTOM_FIELD' },
    errors: ['PROJECT_NOT_FOUND', 'INVALID_ASSIGNEE', 'TASK_ARCHIVE_BLOCKED', 'INVALID_CUSTOM_FIELD', 'CUSTOM_FIELD_NOT_FOUND', 'CUSTOM_FIELD_READ_ONLY', 'CUSTOM_FIELD_FORBIDDEN', 'CUSTOM_FIELD_VALUE_INVALID', 'CUSTOM_FIELD_REQUIRED'],
    response: { status: 201, description: 'The task', schema: schemas.task },
    command: ({ body, request }) => ({
      statement: api.rows('task_create', body, schemaVersionOf(request)),
      location: '/v1/tasks/',
    }),
  },
  {
    kind: 'statement',
    operationId: 'getTask', method: 'GET', path: '/v1/tasks/{task_id}', tag: 'Tasks',
    summary: 'One task, with the transitions it currently offers', etag: true, params: taskId,
    errors: ['TASK_NOT_FOUND'],
    response: { status: 200, description: 'The task', schema: schemas.task },
    statement: ({ params }) => getStatement(api.rows('task_get', params.task_id),
      () => new ApiError('TASK_NOT_FOUND', `no task ${params.task_id} in your organization`)),
  },
  {
    kind: 'handler',
    operationId: 'updateTask', method: 'PATCH', path: '/v1/tasks/{task_id}', tag: 'Tasks',
    summary: 'Change the supplied fields (status changes go through transitions)', roles: ['manager'], ifMatch: true, schemaVersion: true,
    etag: true, params: taskId, body: Joi.object({ ...writable, ...echoed }).min(1),
    fieldCodes: { '/assignee_member_ids/*': 'INVALID_ASSIGNEE', '/custom_fields': 'INVALID_CUSTOM_FIELD' },
    errors: ['TASK_NOT_FOUND', 'INVALID_ASSIGNEE', 'IMMUTABLE_FIELD', 'INVALID_TRANSITION', 'TASK_ARCHIVE_BLOCKED', 'INVALID_CUSTOM_FIELD', 'CUSTOM_FIELD_NOT_FOUND', 'CUSTOM_FIELD_READ_ONLY', 'CUSTOM_FIELD_FORBIDDEN', 'CUSTOM_FIELD_VALUE_INVALID', 'CUSTOM_FIELD_REQUIRED'],
    response: { status: 200, description: 'The task', schema: schemas.task },
    handler: (ctx) => one(ctx, api.rows('task_update', ctx.params.task_id, ctx.ifMatch, ctx.body, schemaVersionOf(ctx.request))),
  },
  {
    kind: 'handler',
    operationId: 'transitionTask', method: 'POST', path: '/v1/tasks/{task_id}/transitions', tag: 'Tasks',
    summary: 'Apply a transition the task offers', roles: ['manager'], idempotencyKey: true, etag: true, params: taskId,
    body: Joi.object({
      transition: Joi.string().pattern(/^[a-z][a-z0-9_]{0,40}$/).required(),
      completed_at: timestamp,
      subject,
    }),
    fieldCodes: { '/transition': 'INVALID_TRANSITION', '/subject': 'INVALID_SUBJECT_MEMBER' },
    errors: ['TASK_NOT_FOUND', 'INVALID_TRANSITION', 'INVALID_SUBJECT_MEMBER', 'TASK_ARCHIVE_BLOCKED'],
    response: { status: 200, description: 'The task after the transition', schema: schemas.task },
    handler: (ctx) => one(ctx, api.rows('task_transition', ctx.params.task_id, ctx.body.transition,
      ctx.body.completed_at ?? null, ctx.body.subject?.member_id ?? null)),
  },
  {
    kind: 'handler',
    operationId: 'addTaskNote', method: 'POST', path: '/v1/tasks/{task_id}/notes', tag: 'Tasks',
    summary: 'Add a note (manager, or member where the task policy permits)', roles: ['manager', 'member'],
    idempotencyKey: true, params: taskId,
    body: Joi.object({ text: Joi.string().min(1).max(20000).pattern(/\S/).required(), subject }),
    fieldCodes: { '/subject': 'INVALID_SUBJECT_MEMBER' },
    errors: ['TASK_NOT_FOUND', 'INVALID_SUBJECT_MEMBER'],
    response: { status: 201, description: 'The note', schema: schemas.taskNote },
    handler: async (ctx) => {
      const { rows: [row] } = await api.value('task_add_note', ctx.params.task_id, ctx.body.text,
        ctx.body.subject?.member_id ?? null).execute(ctx.tx);
      return { status: 201, body: row!.value };
    },
  },
  {
    kind: 'handler',
    operationId: 'replaceTaskDependencies', method: 'PUT', path: '/v1/tasks/{task_id}/dependencies', tag: 'Tasks',
    summary: 'Replace the task\'s predecessors (no cycles)', roles: ['manager'], ifMatch: true, etag: true, params: taskId,
    body: Joi.object({ predecessor_task_ids: Joi.array().items(idOf('tsk')).unique().max(100).required() }),
    errors: ['TASK_NOT_FOUND', 'DEPENDENCY_CYCLE', 'TASK_ARCHIVE_BLOCKED'],
    response: { status: 200, description: 'The task', schema: schemas.task },
    handler: (ctx) => one(ctx, api.rows('task_replace_dependencies', ctx.params.task_id, ctx.ifMatch,
      ctx.body.predecessor_task_ids)),
  },
  {
    kind: 'handler',
    operationId: 'archiveTask', method: 'POST', path: '/v1/tasks/{task_id}/archive', tag: 'Tasks',
    summary: 'Archive (409 TASK_ARCHIVE_BLOCKED while open tasks depend on it)', roles: ['manager'], idempotencyKey: true,
    etag: true, params: taskId,
    errors: ['TASK_NOT_FOUND', 'TASK_ARCHIVE_BLOCKED'],
    response: { status: 200, description: 'The task', schema: schemas.task },
    handler: (ctx) => one(ctx, api.rows('task_set_archived', ctx.params.task_id, true)),
  },
  {
    kind: 'handler',
    operationId: 'restoreTask', method: 'POST', path: '/v1/tasks/{task_id}/restore', tag: 'Tasks',
    summary: 'Restore an archived task (its project must be active)', roles: ['manager'], idempotencyKey: true,
    etag: true, params: taskId,
    errors: ['TASK_NOT_FOUND', 'TASK_ARCHIVE_BLOCKED'],
    response: { status: 200, description: 'The task', schema: schemas.task },
    handler: (ctx) => one(ctx, api.rows('task_set_archived', ctx.params.task_id, false)),
  },
];
