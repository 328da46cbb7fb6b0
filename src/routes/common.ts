// Shared pieces of the resource routes: the schema-version header, keyset listing over a view.
import Joi from 'joi';
import { sql, type RawBuilder } from 'kysely';
import type { Request } from '@hapi/hapi';
import type { OperationContext } from '../http/operation.ts';
import { header } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { decodeCursor, encodeCursor, listQuery, type SortSpec, type SortOrder } from '../http/pagination.ts';

/** `Svc-Schema-Version: <n>` on a write: the write fails with OBJECT_SCHEMA_CHANGED when the
 * object type's custom-field schema has moved on since the client read it. */
export function schemaVersionOf(request: Request): number | null {
  const raw = header(request, 'svc-schema-version');
  if (raw === undefined) return null;
  if (!/^\d{1,9}$/.test(raw.trim())) throw new ApiError('INVALID_SCHEMA_VERSION', 'Svc-Schema-Version must be a positive integer');
  return Number(raw.trim());
}

export const idOf = (prefix: string) => Joi.string().pattern(new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`));
export const email = Joi.string().email({ tlds: false }).max(320).description('an email; matched after trimming and lower-casing');
/** A calendar date that exists (2026-02-30 does not). */
export const date = Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/).custom((v: string, h) => {
  const d = new Date(`${v}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v ? h.error('any.invalid') : v;
}).message('must be an existing calendar date, YYYY-MM-DD');
export const timestamp = Joi.string().isoDate();
export const customFields = Joi.object().unknown(true).description('values keyed by api_name; null clears a field');
export const subject = Joi.object({ member_id: Joi.string().max(320).required() });

export function sortQuery(sorts: Record<string, SortSpec>, defaultSort: string, defaultOrder: SortOrder) {
  return {
    sort: Joi.string().valid(...Object.keys(sorts)).default(defaultSort),
    order: Joi.string().valid('asc', 'desc').default(defaultOrder),
    ...listQuery,
  };
}

/** Keyset page over a view: `(sort expr, id)` compared with the cursor's last row, limit + 1 rows. */
export async function listPage(ctx: OperationContext, view: 'api.projects' | 'api.tasks' | 'api.time_entries' | 'api.approvals' | 'api.webhook_endpoints' | 'api.webhook_deliveries' | 'api.invoices'
  | 'api.integration_connections',
  spec: SortSpec, order: SortOrder, where: RawBuilder<boolean>[]) {
  const { query, app, route } = ctx;
  const after = decodeCursor(app.cursorKey, route, query);
  const expr = sql.raw(spec.expr);
  const conditions = [...where];
  if (after) {
    if (after.length !== 2 || typeof after[1] !== 'string') throw new ApiError('INVALID_CURSOR', 'the cursor is malformed');
    // The key travels as text: a typed parameter would pass through the driver's Date (milliseconds, no infinity).
    conditions.push(sql<boolean>`(${expr}, id) ${sql.raw(order === 'asc' ? '>' : '<')} ((${String(after[0])}::text)::${sql.raw(spec.type)}, ${after[1]}::text)`);
  }
  const whereSql = conditions.length ? sql.join(conditions, sql` and `) : sql`true`;
  const { rows } = await sql<{ id: string; doc: unknown; sort_key: string }>`
    select id, doc, (${expr})::text as sort_key from ${sql.raw(view)}
     where ${whereSql}
     order by ${expr} ${sql.raw(order)}, id ${sql.raw(order)}
     limit ${query.limit + 1}`.execute(ctx.tx);
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const last = page[page.length - 1];
  return {
    object: 'list' as const,
    data: page.map((r) => r.doc),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(app.cursorKey, route, query, [last.sort_key, last.id]) : null,
  };
}
