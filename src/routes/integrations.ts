import Joi from 'joi';
import type { Expression, SqlBool } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { idOf, listStatement, sortQuery, type ListView, type SortSpec } from './common.ts';

// Connections are relevant to finance (accounting) or manager (the rest): nobody else has any.
const roles = ['manager', 'finance'] as const;

const SORTS: Record<string, SortSpec<'api.integration_connections'>> = { created_at: { expr: (eb) => eb.ref('created_at'), type: 'timestamptz' } };

/** Resources a readiness check may name, and the view that says whether the caller may read one. */
const RESOURCE_VIEWS = {
  invoice: 'api.invoices', project: 'api.projects', task: 'api.tasks', time_entry: 'api.time_entries',
} as const satisfies Record<string, ListView>;

export const integrationOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listIntegrationConnections', method: 'GET', path: '/v1/integration-connections', tag: 'Integration connections', roles,
    summary: 'Organization connections relevant to your Roles (accounting: finance; others: manager)',
    query: Joi.object({ category: Joi.string().max(40), status: Joi.string().max(40), ...sortQuery(SORTS, 'created_at', 'asc') }),
    response: { status: 200, description: 'A page of connections', schema: schemas.list(schemas.integrationConnection) },
    statement: (ctx) => {
      return listStatement(ctx, 'api.integration_connections', SORTS.created_at!, ctx.query.order, (eb) => {
        const where: Expression<SqlBool>[] = [];
        if (ctx.query.category) where.push(eb('category', '=', ctx.query.category));
        if (ctx.query.status) where.push(eb('status', '=', ctx.query.status));
        return where;
      });
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
      const row = await ctx.tx.selectFrom('api.integration_connections').select(['doc', 'version'])
        .where('id', '=', ctx.params.connection_id).executeTakeFirst();
      if (!row) {
        const { rows: [hidden] } = await api.value('integration_connection_hidden_reason', ctx.params.connection_id).execute(ctx.tx);
        if (hidden?.value === 'personal') {
          throw new ApiError('PERSONAL_CONNECTION_NOT_ALLOWED', 'this is a personal connection of a named user; API Clients use organization connections only');
        }
        if (hidden?.value) throw new ApiError('ROLE_REQUIRED', `this connection is relevant to the ${hidden.value} Role only`);
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
      const view = RESOURCE_VIEWS[resource.type as keyof typeof RESOURCE_VIEWS];
      const seen = await ctx.tx.selectNoFrom((eb) => eb.exists(eb.selectFrom(view).where('id', '=', resource.id)).as('ok'))
        .executeTakeFirst();
      if (!seen?.ok) throw new ApiError('RESOURCE_NOT_FOUND', `no ${resource.type} ${resource.id} that your Roles can read`);
      const { rows: [r] } = await api.value('integration_readiness', capability).execute(ctx.tx);
      return { body: { ...(r!.value as Record<string, unknown>), resource } };
    },
  },
];
