// Shared pieces of the resource routes: the schema-version header, keyset listing over a view.
import Joi from 'joi';
import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { Request } from '@hapi/hapi';
import type { ReadStatement, StatementContext } from '../http/operation.ts';
import { header } from '../http/headers.ts';
import { READY } from '../http/operation/statement.ts';
import { RawJson } from '../http/operation/answer.ts';
import { ApiError, type ProblemCode } from '../http/errors.ts';
import { decodeCursor, encodeCursor, listQuery, type SortOrder } from '../http/pagination.ts';
import { viewExpressions, type Declared, type View } from '../db/api.ts';
import type { DB } from '../db/schema.ts';

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
  // Year 0000 is a date to JavaScript (ISO 8601's 1 BC) and none to PostgreSQL, whose cast would
  // answer for the client's input.
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v || v.startsWith('0000') ? h.error('any.invalid') : v;
}).message('must be an existing calendar date, YYYY-MM-DD');
export const timestamp = Joi.string().isoDate();
/** The levels and bytes a free-form JSON value may hold, checked without recursion. */
export function jsonBounds(value: unknown, limits: { bytes: number; depth: number; keyLength?: number }): string | undefined {
  if (limits.keyLength && value && typeof value === 'object' && !Array.isArray(value)
      && Object.keys(value).some((k) => k.length > limits.keyLength!)) return `a key longer than ${limits.keyLength} characters`;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, level] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (level >= limits.depth) return `nested more than ${limits.depth} levels`;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, level + 1]);
  }
  return Buffer.byteLength(JSON.stringify(value) ?? '') > limits.bytes ? `more than ${limits.bytes} bytes as JSON` : undefined;
}

/** A free-form JSON field (metadata, an agent's input, a report's parameters, a subject, custom
 * fields, content blocks): bounded in levels and bytes before anything else reads it (the limits
 * are in the OpenAPI document through the description, and in README "Limits"). `overBytes`: the
 * spec's code for a value over the byte bound, where the spec names one for what is too large
 * (a message over its working-context budget), instead of the field's own. */
export function freeJson<S extends Joi.AnySchema>(schema: S,
  limits: { bytes: number; depth: number; keyLength?: number; overBytes?: ProblemCode }): S {
  const described = (schema.describe().flags as { description?: string } | undefined)?.description;
  const checked = schema.custom((v: unknown, h) => {
    const why = jsonBounds(v, limits);
    if (why && limits.overBytes && why.endsWith('bytes as JSON')) return h.error(limits.overBytes, { why });
    return why ? h.message({ custom: `{{#label}} is too large: ${why}` }) : v;
  });
  return (limits.overBytes ? checked.messages({ [limits.overBytes]: '{{#label}} is too large: {{#why}}' }) : checked).description(`${described ? `${described}; ` : ''}at most ${limits.depth} levels of arrays and objects and ${limits.bytes} bytes as JSON`
    + (limits.keyLength ? `, keys of at most ${limits.keyLength} characters` : '')) as S;
}

/** Stripe's metadata shape, a little wider: at most 20 keys of at most 40 characters. */
export const metadata = freeJson(Joi.object().unknown(true).max(20), { bytes: 8192, depth: 4, keyLength: 40 });
export const customFields = freeJson(Joi.object().unknown(true).description('values keyed by api_name; null clears a field'), { bytes: 65_536, depth: 4 });
export const subject = Joi.object({ member_id: Joi.string().max(320).required() });

export function sortQuery(sorts: Record<string, unknown>, defaultSort: string, defaultOrder: SortOrder) {
  return {
    sort: Joi.string().valid(...Object.keys(sorts)).default(defaultSort),
    order: Joi.string().valid('asc', 'desc').default(defaultOrder),
    ...listQuery,
  };
}

/** The columns of a one-resource read (getStatement) and of a list page (listStatement). */
export const RESOURCE_COLUMNS = { doc: 'text', version: 'int4' } as const;
export const PAGE_COLUMNS = { data: 'text', has_more: 'bool', last_key: 'text', last_id: 'text' } as const;

/** One resource in one statement with the request context: `source` yields `doc` and `version`
 * (a view filtered by id, or an api function), gated on READY; no row is `notFound`. */
export function getStatement(source: Expression<{ doc: unknown; version: number | null }>, notFound: () => ApiError): ReadStatement {
  return {
    query: sql`select app_private.wire_json(g.doc) as doc, g.version from (${source}) g where ${READY}`,
    point: true,
    respond: (row) => {
      if (!row) throw notFound();
      const { doc, version } = row as Declared<typeof RESOURCE_COLUMNS>;
      return { body: new RawJson(doc!), version };
    },
  };
}

/** The views a list pages through: each has an `id` and the wire document `doc`. */
export type ListView = { [V in View]: DB[V] extends { id: unknown; doc: unknown } ? V : never }[View];

/** A sort offered by a list over `V`: its expression (never null) and its type for the cursor cast.
 * `dense`: an ascending integer key numbering the rows 1, 2, 3, … without gaps (a report's rows),
 * so that a page is a range of it. */
export interface SortSpec<V extends View> {
  expr: (eb: ExpressionBuilder<DB, V>) => Expression<unknown>;
  type: 'text' | 'date' | 'timestamptz' | 'integer';
  dense?: boolean;
}

/** Keyset page over a view, in one statement with the request context (README "Adding an
 * endpoint"): `(sort expr, id)` compared with the cursor's last row, limit + 1 rows, and the
 * page's `data` array built as JSON text by PostgreSQL, which the server passes on untouched.
 * `where` names the view's columns through its typed expression builder. */
export function listStatement<V extends ListView>(ctx: StatementContext, view: V, spec: SortSpec<V>, order: SortOrder,
  where: (eb: ExpressionBuilder<DB, V>) => Expression<SqlBool>[], checks: RawBuilder<unknown>[] = []): ReadStatement {
  const { query, app, route } = ctx;
  const after = decodeCursor(app.cursorKey, route, query);
  const eb = viewExpressions<V>();
  const expr = spec.expr(eb);
  // Every ListView has these two columns.
  const id = sql.ref('id');
  const conditions: Expression<SqlBool>[] = [READY, ...where(eb)];
  if (after) {
    if (after.length !== 2 || typeof after[1] !== 'string') throw new ApiError('INVALID_CURSOR', 'the cursor is malformed');
    // The key travels as text: a typed parameter would pass through the driver's Date (milliseconds, no infinity).
    conditions.push(sql<boolean>`(${expr}, ${id}) ${sql.raw(order === 'asc' ? '>' : '<')} ((${String(after[0])}::text)::${sql.raw(spec.type)}, ${after[1]}::text)`);
  }
  // The page size is written into the statement, not sent as a parameter: with `limit $n` the
  // planner costs a generic plan for an unknown LIMIT (10 % of the rows) above the custom ones, so
  // every execution was planned again (pg_prepared_statements: 0 generic plans in 12). With the
  // number in the text the cached generic plan is used after five executions (PostgreSQL's
  // plan_cache_mode auto), and at most MAX_LIMIT texts exist per list.
  const limit: number = query.limit;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`listStatement: limit ${limit} is not a validated page size`);
  if (spec.dense) {
    // The page's rows named as a range of the key: read through the index whatever the planner
    // estimates (a report's results are read as soon as they are written, before any ANALYZE;
    // without the bound the planner sorted all 50,000 rows of a run for each page of 100).
    if (order !== 'asc' || spec.type !== 'integer') throw new Error('listStatement: a dense key is an ascending integer');
    const from = after ? Number(after[0]) : 0;
    if (!Number.isSafeInteger(from)) throw new ApiError('INVALID_CURSOR', 'the cursor is malformed');
    // In InitPlans, as the time entries' dates are: one plan whatever the page.
    conditions.push(sql<boolean>`${expr} > (select ${from}::integer) and ${expr} <= (select ${from + limit + 1}::integer)`);
  }
  const n = sql.lit(limit);
  return {
    checks,
    // row_number() over () numbers the rows in the order the page query produced them.
    query: sql`
      select coalesce(string_agg(app_private.wire_json(p.doc), ',' order by p.n) filter (where p.n <= ${n}), '') as data,
             count(*) > ${n} as has_more,
             max(p.sort_key) filter (where p.n = ${n}) as last_key,
             max(p.id) filter (where p.n = ${n}) as last_id
        from (select row_number() over () as n, s.* from (
                select ${id} as id, ${sql.ref('doc')} as doc, (${expr})::text as sort_key from ${sql.table(view)}
                 where ${sql.join(conditions, sql` and `)}
                 order by ${expr} ${sql.raw(order)}, ${id} ${sql.raw(order)}
                 limit ${sql.lit(limit + 1)}) s) p`,
    respond: (row) => {
      const page = row as Declared<typeof PAGE_COLUMNS>;
      const hasMore = page.has_more === true;
      const cursor = hasMore ? JSON.stringify(encodeCursor(app.cursorKey, route, query, [page.last_key, page.last_id])) : 'null';
      return { body: new RawJson(`{"object":"list","data":[${page.data}],"has_more":${hasMore},"next_cursor":${cursor}}`) };
    },
  };
}
