import Joi from 'joi';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Operation, OperationContext } from '../http/operation.ts';
import { fieldErrors, withFieldCodes } from '../http/operation/input.ts';
import { READY } from '../http/operation/statement.ts';
import { ApiError, PROBLEMS, type ProblemCode } from '../http/errors.ts';
import { listQuery } from '../http/pagination.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { date, email, getStatement, idOf, listStatement, subject } from './common.ts';

/** Longest span of an organization-wide listing (no member, project, task or external id filter). */
export const MAX_ORG_WIDE_DAYS = 93;
export const MAX_BATCH = 100;

/** The spec's codes for the entry fields' rules (a bad duration is INVALID_DURATION, …). */
const TIME_ENTRY_FIELD_CODES: Record<string, ProblemCode> = { '/minutes': 'INVALID_DURATION', '/work_date': 'INVALID_WORK_DATE', '/subject': 'INVALID_SUBJECT_MEMBER' };

const timeEntryId = Joi.object({ time_entry_id: idOf('tim').required() });
const fields = {
  project_id: idOf('prj'),
  task_id: idOf('tsk').allow(null),
  work_date: date,
  minutes: Joi.number().integer().strict().min(1).max(1440),
  billable: Joi.boolean().strict(),
  notes: Joi.string().max(5000).allow('', null),
};
const entry = Joi.object({
  subject: subject.required(),
  ...fields,
  project_id: fields.project_id.required(),
  work_date: fields.work_date.required(),
  minutes: fields.minutes.required(),
  external_id: Joi.string().min(1).max(255),
});
const echoed = Object.fromEntries(['id', 'object', 'member_id', 'subject', 'status', 'external_id', 'approval_id', 'created_at',
  'updated_at'].map((k) => [k, Joi.any()]));

async function one(ctx: OperationContext, q: RawBuilder<{ doc: unknown; version: number | null }>, status = 200) {
  const { rows: [row] } = await q.execute(ctx.tx);
  if (!row) throw new ApiError('TIME_ENTRY_NOT_FOUND', `no time entry ${ctx.params.time_entry_id} in your organization`);
  return { body: row.doc, version: row.version ?? undefined, status };
}

export const timeEntryOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listTimeEntries', method: 'GET', path: '/v1/time-entries', tag: 'Time entries',
    summary: `Time entries by work date; an organization-wide listing needs work_date_gte and work_date_lte at most ${MAX_ORG_WIDE_DAYS} days apart`,
    roles: ['manager', 'finance', 'hr'],
    query: Joi.object({
      member_id: email, project_id: idOf('prj'), task_id: idOf('tsk'),
      work_date_gte: date, work_date_lte: date,
      status: Joi.string().valid('draft', 'submitted', 'approved', 'rejected'),
      billable: Joi.boolean(), external_id: Joi.string().max(255),
      ...listQuery,
    }),
    response: { status: 200, description: 'A page of time entries, by work_date then id', schema: schemas.list(schemas.timeEntry) },
    statement: (ctx) => {
      const { query } = ctx;
      const checks = [api.call('require_time_entry_read')];
      const scoped = query.member_id || query.project_id || query.task_id || query.external_id;
      if (!scoped) {
        const bounded = query.work_date_gte !== undefined && query.work_date_lte !== undefined;
        const from = bounded ? Date.parse(query.work_date_gte) : NaN;
        const to = bounded ? Date.parse(query.work_date_lte) : NaN;
        if (!bounded || to < from || (to - from) / 86_400_000 > MAX_ORG_WIDE_DAYS) {
          // Refused after the read check, as the database answers who may read before what is asked.
          return {
            checks, query: sql`select 1 as refused where ${READY}`,
            respond: () => {
              throw new ApiError('INVALID_REQUEST',
                `an organization-wide listing needs work_date_gte and work_date_lte, at most ${MAX_ORG_WIDE_DAYS} days apart (or filter by member_id, project_id, task_id or external_id)`,
                { errors: [{ pointer: '/work_date_gte', detail: 'bounded date range required', code: 'date_range.required' }] });
            },
          };
        }
      }
      return listStatement(ctx, 'api.time_entries', { expr: (eb) => eb.ref('work_date'), type: 'date' }, 'asc', (eb) => {
        const where: Expression<SqlBool>[] = [eb('deleted_at', 'is', null)];
        if (query.member_id) where.push(eb('member_id', '=', sql<string>`app_private.normalize_email(${query.member_id})`));
        if (query.project_id) where.push(eb('project_id', '=', query.project_id));
        if (query.task_id) where.push(eb('task_id', '=', query.task_id));
        // The bounds are read in subqueries (InitPlans), so that no plan depends on their values: the
        // plan is the time_entries_org_date scan for any range, and with the values visible every
        // execution was planned again (a custom plan's cost, from the range's estimated rows, stays
        // below the generic plan's; 0 generic plans in 11, ~0.65 ms of planning each; docs/benchmarks.md).
        if (query.work_date_gte) where.push(eb('work_date', '>=', sql<Date>`(select ${query.work_date_gte}::date)`));
        if (query.work_date_lte) where.push(eb('work_date', '<=', sql<Date>`(select ${query.work_date_lte}::date)`));
        if (query.status) where.push(eb('status', '=', query.status));
        if (query.billable !== undefined) where.push(eb('billable', '=', query.billable));
        // external_id is unique per client: it finds only this client's entries.
        if (query.external_id) {
          where.push(eb('external_id', '=', query.external_id), eb('created_by_client_id', '=', sql<string>`app.current_client_id()`));
        }
        return where;
      }, checks);
    },
  },
  {
    kind: 'command',
    operationId: 'createTimeEntry', method: 'POST', path: '/v1/time-entries', tag: 'Time entries',
    summary: 'Record time for a subject member (status draft)', roles: ['manager'], idempotencyKey: true, body: entry,
    fieldCodes: TIME_ENTRY_FIELD_CODES,
    errors: ['INVALID_SUBJECT_MEMBER', 'INVALID_WORK_DATE', 'INVALID_DURATION', 'EXTERNAL_ID_CONFLICT'],
    response: { status: 201, description: 'The time entry', schema: schemas.timeEntry },
    command: ({ body }) => ({ statement: api.rows('time_entry_create', body), location: '/v1/time-entries/' }),
  },
  {
    kind: 'handler',
    operationId: 'createTimeEntryBatch', method: 'POST', path: '/v1/time-entries/batches', tag: 'Time entries',
    summary: `Up to ${MAX_BATCH} entries in one request; atomic by default`, roles: ['manager'], idempotencyKey: true,
    body: Joi.object({
      entries: Joi.array().items(Joi.object().unknown(true)).min(1).max(MAX_BATCH).required(),
      atomic: Joi.boolean().strict().default(true),
    }),
    errors: ['INVALID_SUBJECT_MEMBER', 'INVALID_WORK_DATE', 'INVALID_DURATION', 'EXTERNAL_ID_CONFLICT'],
    response: { status: 201, also: [200], description: 'Per-item results, in order (201 when atomic; 200 with atomic=false, where failed items are reported, not fatal)', schema: schemas.timeEntryBatch },
    handler: async (ctx) => {
      // Each item is checked against the entry schema first; SQL checks the rest in one statement.
      const items = ctx.body.entries.map((item: unknown, index: number) => {
        const { error, value } = entry.validate(item, { abortEarly: false, convert: false, errors: { wrap: { label: "'" } } });
        if (error) {
          const { code, errors } = withFieldCodes(fieldErrors(error), TIME_ENTRY_FIELD_CODES);
          return { index, invalid: errors, code };
        }
        return { index, value };
      });
      // SQL checks every well-formed item in one statement (partial mode, so all problems come back);
      // an atomic batch with any problem then fails whole and the transaction rolls back.
      const valid = items.filter((i: any) => i.value);
      const { rows: [row] } = await api.value('time_entry_batch', valid.map((i: any) => i.value), false).execute(ctx.tx);
      const sqlResults = (row!.value as { results: any[] }).results;
      const results = items.map((i: any) => {
        if (i.invalid) return { index: i.index, status: 'failed', error: { code: i.code, errors: i.invalid } };
        return { ...sqlResults[valid.indexOf(i)], index: i.index };
      });
      const failed = results.filter((r: any) => r.status === 'failed');
      if (ctx.body.atomic && failed.length) {
        const errors = failed.flatMap((r: any) => r.error.errors.map((e: any) => ({ ...e, pointer: `/entries/${r.index}${e.pointer ?? ''}` })));
        // As everywhere, the top-level code is the first problem's.
        const first = errors[0]?.code;
        throw new ApiError(first && first in PROBLEMS ? first as ProblemCode : 'VALIDATION_FAILED',
          `${failed.length} of ${items.length} entries are invalid; nothing was created; see errors`, { errors });
      }
      return {
        status: ctx.body.atomic ? 201 : 200,
        body: { object: 'time_entry_batch', atomic: ctx.body.atomic, created: results.length - failed.length, failed: failed.length, results },
      };
    },
  },
  {
    kind: 'statement',
    operationId: 'getTimeEntry', method: 'GET', path: '/v1/time-entries/{time_entry_id}', tag: 'Time entries',
    summary: 'One time entry', roles: ['manager', 'finance', 'hr'], etag: true, params: timeEntryId,
    errors: ['TIME_ENTRY_NOT_FOUND'],
    response: { status: 200, description: 'The time entry', schema: schemas.timeEntry },
    statement: ({ params }) => getStatement(api.rows('time_entry_get', params.time_entry_id),
      () => new ApiError('TIME_ENTRY_NOT_FOUND', `no time entry ${params.time_entry_id} in your organization`)),
  },
  {
    kind: 'handler',
    operationId: 'updateTimeEntry', method: 'PATCH', path: '/v1/time-entries/{time_entry_id}', tag: 'Time entries',
    summary: 'Change a draft or rejected entry', roles: ['manager'], ifMatch: true, etag: true, params: timeEntryId,
    body: Joi.object({ ...fields, ...echoed }).min(1),
    fieldCodes: TIME_ENTRY_FIELD_CODES,
    errors: ['TIME_ENTRY_NOT_FOUND', 'TIME_ENTRY_LOCKED', 'APPROVAL_REQUIRED', 'IMMUTABLE_FIELD', 'INVALID_SUBJECT_MEMBER', 'INVALID_WORK_DATE', 'INVALID_DURATION', 'EXTERNAL_ID_CONFLICT'],
    response: { status: 200, description: 'The time entry', schema: schemas.timeEntry },
    handler: (ctx) => one(ctx, api.rows('time_entry_update', ctx.params.time_entry_id, ctx.ifMatch, ctx.body)),
  },
  {
    kind: 'handler',
    operationId: 'submitTimeEntry', method: 'POST', path: '/v1/time-entries/{time_entry_id}/submit', tag: 'Time entries',
    summary: 'Request approval from a named user (never approves)', roles: ['manager'], idempotencyKey: true, etag: true,
    params: timeEntryId,
    errors: ['TIME_ENTRY_NOT_FOUND', 'TIME_ENTRY_LOCKED'],
    response: { status: 200, description: 'The submitted time entry (approval_id names the request)', schema: schemas.timeEntry },
    handler: (ctx) => one(ctx, api.rows('time_entry_submit', ctx.params.time_entry_id)),
  },
  {
    kind: 'handler',
    operationId: 'deleteTimeEntry', method: 'DELETE', path: '/v1/time-entries/{time_entry_id}', tag: 'Time entries',
    summary: 'Delete a draft or rejected entry (audited; deleting again succeeds)', roles: ['manager'], idempotencyKey: true,
    params: timeEntryId,
    errors: ['TIME_ENTRY_NOT_FOUND', 'TIME_ENTRY_LOCKED'],
    response: { status: 204, description: 'Deleted' },
    handler: async (ctx) => {
      await api.value('time_entry_delete', ctx.params.time_entry_id).execute(ctx.tx);
      return { status: 204, body: undefined };
    },
  },
];
