import Joi from 'joi';
import { sql, type RawBuilder } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import type { SortSpec } from '../http/pagination.ts';
import { schemas } from './schemas.ts';
import { idOf, listStatement, sortQuery } from './common.ts';

// Connections are relevant to finance (accounting) or manager (the rest): nobody else has any.
const roles = ['manager', 'finance'] as const;

const SORTS: Record<string, SortSpec> = { created_at: { expr: 'created_at', type: 'timestamptz' } };

/** Resources a readiness check may name, and the view that says whether the caller may read one. */
const RESOURCE_VIEWS: Record<string, string> = {
  invoice: 'api.invoices', project: 'api.projects', task: 'api.tasks', time_entry: 'api.time_entries',
};

export const integrationOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listIntegrationConnections', method: 'GET', path: '/v1/integration-connections', tag: 'Integration connections', roles,
    summary: 'Organization connections relevant to your Roles (accounting: finance; others: manager)',
    query: Joi.object({ category: Joi.string().max(40), status: Joi.string().max(40), ...sortQuery(SORTS, 'created_at', 'asc') }),
    response: { status: 200, description: 'A page of connections', schema: schemas.list(schemas.integrationConnection) },
    statement: (ctx) => {
      const where: RawBuilder<boolean>[] = [];
      if (ctx.query.category) where.push(sql`category = ${ctx.query.category}`);
      if (ctx.query.status) where.push(sql`status = ${ctx.query.status}`);
      return listStatement(ctx, 'api.integration_connections', SORTS.created_at!, ctx.query.order, where);
    },
  },
  {
    kind: 'handler',
    operationId: 'getIntegrationConnection', method: 'GET', path: '/v1/integration-connections/{connection_id}',
    tag: 'Integration connections', roles, summary: 'One connection (never credentials or provider tokens)', etag: true,
    params: Joi.object({ connection_id: idOf('icn').required() }),
    errors: ['INTEGRATION_CONNECTION_NOT_FOUND', 'PERSONAL_CONNECTION_NOT_ALLOWED'],
    response: { status: 200, description: 'The connection', schema: schemas.integrationConnection },
    handler: async (ctx) => {
      const { rows: [row] } = await sql<{ doc: unknown; version: number }>`
        select doc, version from api.integration_connections where id = ${ctx.params.connection_id}`.execute(ctx.tx);
      if (!row) {
        const { rows: [hidden] } = await sql<{ reason: string | null }>`
          select api.integration_connection_hidden_reason(${ctx.params.connection_id}) as reason`.execute(ctx.tx);
        if (hidden?.reason === 'personal') {
          throw new ApiError('PERSONAL_CONNECTION_NOT_ALLOWED', 'this is a personal connection of a named user; API Clients use organization connections only');
        }
        if (hidden?.reason) throw new ApiError('ROLE_REQUIRED', `this connection is relevant to the ${hidden.reason} Role only`);
        throw new ApiError('INTEGRATION_CONNECTION_NOT_FOUND', `no connection ${ctx.params.connection_id} in your organization`);
      }
      return { body: row.doc, version: row.version };
    },
  },
  {
    kind: 'handler',
    operationId: 'checkIntegrationConnectionReadiness', method: 'POST', path: '/v1/integration-connections/readiness',
    tag: 'Integration connections', roles,
    summary: 'Whether an eligible organization connection offers a capability for a resource; performs nothing',
    body: Joi.object({
      capability: Joi.string().pattern(/^[a-z_]+(\.[a-z_]+)+$/).max(100).required().description('e.g. invoice.export'),
      resource: Joi.object({ type: Joi.string().valid(...Object.keys(RESOURCE_VIEWS)).required(), id: Joi.string().max(80).required() })
        .required(),
    }),
    errors: ['RESOURCE_NOT_FOUND'],
    response: { status: 200, description: 'The readiness report', schema: schemas.integrationReadiness },
    handler: async (ctx) => {
      const { capability, resource } = ctx.body;
      const { rows: [seen] } = await sql<{ ok: boolean }>`
        select exists (select from ${sql.raw(RESOURCE_VIEWS[resource.type]!)} where id = ${resource.id}) as ok`.execute(ctx.tx);
      if (!seen?.ok) throw new ApiError('RESOURCE_NOT_FOUND', `no ${resource.type} ${resource.id} that your Roles can read`);
      const { rows: [r] } = await sql<{ report: Record<string, unknown> }>`
        select api.integration_readiness(${capability}) as report`.execute(ctx.tx);
      return { body: { ...r!.report, resource } };
    },
  },
];
