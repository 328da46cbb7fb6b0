import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import {
  customFields, date, email, getStatement, idOf, listStatement, schemaVersionOf, sortQuery, type SortSpec,
} from './common.ts';

const projectId = Joi.object({ project_id: idOf('prj').required() });
const code = Joi.string().pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/).message('code: 1 to 32 letters, digits, dot, dash or underscore');

const writable = {
  code,
  name: Joi.string().min(1).max(200).pattern(/\S/),
  description: Joi.string().max(10000).allow('', null),
  start_date: date.allow(null),
  end_date: date.allow(null),
  manager_member_id: email.allow(null),
  customer_id: idOf('com').allow(null),
  custom_fields: customFields,
};

// Read-only members a client may echo back from a GET: they answer IMMUTABLE_FIELD, not "unknown key".
const echoed = Object.fromEntries(['id', 'object', 'organization_id', 'status', 'currency', 'created_at', 'updated_at', 'version']
  .map((k) => [k, Joi.any()]));

export const PROJECT_SORTS: Record<string, SortSpec<'api.projects'>> = {
  created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' },
  updated_at: { expr: (eb) => eb.ref('updated_at'), type: 'timestamptz' },
  name: { expr: (eb) => eb.fn('lower', [eb.ref('name')]), type: 'text' },
  code: { expr: (eb) => eb.fn('lower', [eb.ref('code')]), type: 'text' },
  start_date: { expr: (eb) => sql`coalesce(${eb.ref('start_date')}, 'infinity'::date)`, type: 'date' },
  end_date: { expr: (eb) => sql`coalesce(${eb.ref('end_date')}, 'infinity'::date)`, type: 'date' },
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number | null }>) {
  const { rows: [row] } = await q.execute(ctx.tx);
  if (!row) throw new ApiError('PROJECT_NOT_FOUND', `no project ${ctx.params.project_id} in your organization`);
  return { body: row.doc, version: row.version ?? undefined };
}

export const projectOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listProjects', method: 'GET', path: '/v1/projects', tag: 'Projects',
    summary: 'Projects of the organization; archived ones only with status=archived',
    query: Joi.object({
      status: Joi.string().valid('active', 'archived').default('active'),
      customer_id: idOf('com'),
      manager_member_id: email,
      start_date_gte: date,
      end_date_lte: date,
      search: Joi.string().trim().min(1).max(200).description('part of the name or code'),
      ...sortQuery(PROJECT_SORTS, 'created_at', 'desc'),
    }),
    response: { status: 200, description: 'A page of projects', schema: schemas.list(schemas.project) },
    statement: (ctx) => {
      const { query } = ctx;
      // Filtering by a field the caller's Roles cannot read would reveal it: the database refuses.
      const checks: RawBuilder<unknown>[] = [];
      if (query.manager_member_id) checks.push(api.call('require_any_role', ['member', 'manager', 'hr'], 'filtering projects by manager_member_id'));
      if (query.customer_id) checks.push(api.call('require_any_role', ['member', 'manager', 'finance'], 'filtering projects by customer_id'));
      return listStatement(ctx, 'api.projects', PROJECT_SORTS[query.sort]!, query.order, (eb) => {
        const where: Expression<SqlBool>[] = [eb('status', '=', query.status)];
        if (query.customer_id) where.push(eb('customer_id', '=', query.customer_id));
        if (query.manager_member_id) where.push(eb('manager_member_id', '=', sql<string>`app_private.normalize_email(${query.manager_member_id})`));
        if (query.start_date_gte) where.push(eb('start_date', '>=', sql<Date>`${query.start_date_gte}::date`));
        if (query.end_date_lte) where.push(eb('end_date', '<=', sql<Date>`${query.end_date_lte}::date`));
        if (query.search) {
          const like = `%${escapeLike(query.search.toLowerCase())}%`;
          where.push(eb.or([eb(eb.fn('lower', [eb.ref('name')]), 'like', like), eb(eb.fn('lower', [eb.ref('code')]), 'like', like)]));
        }
        return where;
      }, checks);
    },
  },
  {
    kind: 'command',
    operationId: 'createProject', method: 'POST', path: '/v1/projects', tag: 'Projects',
    summary: 'Create a project (status active)', roles: ['manager'], idempotencyKey: true, schemaVersion: true,
    body: Joi.object({ ...writable, code: code.required(), name: writable.name.required() }),
    fieldCodes: { '/manager_member_id': 'INVALID_MANAGER', '/custom_fields': 'INVALID_CUSTOM_FIELD' },
    errors: ['PROJECT_CODE_CONFLICT', 'INVALID_MANAGER', 'INVALID_CUSTOM_FIELD', 'CUSTOM_FIELD_NOT_FOUND', 'CUSTOM_FIELD_READ_ONLY', 'CUSTOM_FIELD_FORBIDDEN', 'CUSTOM_FIELD_VALUE_INVALID', 'CUSTOM_FIELD_REQUIRED'],
    response: { status: 201, description: 'The project', schema: schemas.project },
    command: ({ body, request }) => ({
      statement: api.rows('project_create', body, schemaVersionOf(request)),
      location: '/v1/projects/',
    }),
  },
  {
    kind: 'statement',
    operationId: 'getProject', method: 'GET', path: '/v1/projects/{project_id}', tag: 'Projects',
    summary: 'One project', etag: true, params: projectId,
    errors: ['PROJECT_NOT_FOUND'],
    response: { status: 200, description: 'The project', schema: schemas.project },
    statement: ({ params }) => getStatement(api.rows('project_get', params.project_id),
      () => new ApiError('PROJECT_NOT_FOUND', `no project ${params.project_id} in your organization`)),
  },
  {
    kind: 'handler',
    operationId: 'updateProject', method: 'PATCH', path: '/v1/projects/{project_id}', tag: 'Projects',
    summary: 'Change the supplied fields', roles: ['manager'], ifMatch: true, etag: true, params: projectId, schemaVersion: true,
    body: Joi.object({ ...writable, ...echoed }).min(1),
    fieldCodes: { '/manager_member_id': 'INVALID_MANAGER', '/custom_fields': 'INVALID_CUSTOM_FIELD' },
    errors: ['PROJECT_NOT_FOUND', 'PROJECT_CODE_CONFLICT', 'INVALID_MANAGER', 'IMMUTABLE_FIELD', 'INVALID_CUSTOM_FIELD', 'CUSTOM_FIELD_NOT_FOUND', 'CUSTOM_FIELD_READ_ONLY', 'CUSTOM_FIELD_FORBIDDEN', 'CUSTOM_FIELD_VALUE_INVALID', 'CUSTOM_FIELD_REQUIRED'],
    response: { status: 200, description: 'The project', schema: schemas.project },
    handler: (ctx) => one(ctx, api.rows('project_update', ctx.params.project_id, ctx.ifMatch, ctx.body, schemaVersionOf(ctx.request))),
  },
  {
    kind: 'handler',
    operationId: 'archiveProject', method: 'POST', path: '/v1/projects/{project_id}/archive', tag: 'Projects',
    summary: 'Archive (409 PROJECT_ARCHIVE_BLOCKED while it has open tasks)', roles: ['manager'], idempotencyKey: true,
    etag: true, params: projectId,
    errors: ['PROJECT_NOT_FOUND', 'PROJECT_ARCHIVE_BLOCKED'],
    response: { status: 200, description: 'The archived project', schema: schemas.project },
    handler: (ctx) => one(ctx, api.rows('project_set_status', ctx.params.project_id, 'archived')),
  },
  {
    kind: 'handler',
    operationId: 'restoreProject', method: 'POST', path: '/v1/projects/{project_id}/restore', tag: 'Projects',
    summary: 'Restore an archived project while its references are still valid', roles: ['manager'], etag: true,
    params: projectId,
    errors: ['PROJECT_NOT_FOUND', 'INVALID_MANAGER'],
    response: { status: 200, description: 'The restored project', schema: schemas.project },
    handler: (ctx) => one(ctx, api.rows('project_set_status', ctx.params.project_id, 'active')),
  },
];
