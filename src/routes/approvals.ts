import Joi from 'joi';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { listQuery } from '../http/pagination.ts';
import { api } from '../db/api.ts';
import { schemas } from './schemas.ts';
import { idOf, listStatement, timestamp } from './common.ts';

export const approvalOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listApprovals', method: 'GET', path: '/v1/approvals', tag: 'Approvals',
    summary: 'Approvals of resources your Roles cover (manager: project; finance: financial; hr: HR), newest request last',
    query: Joi.object({
      status: Joi.string().valid('pending', 'approved', 'rejected'),
      type: Joi.string().valid('time_entry'),
      resource_type: Joi.string().valid('time_entry'),
      resource_id: Joi.string().max(100),
      requested_after: timestamp,
      updated_after: timestamp,
      ...listQuery,
    }),
    response: { status: 200, description: 'A page of approvals', schema: schemas.list(schemas.approval) },
    statement: (ctx) => {
      const { query } = ctx;
      return listStatement(ctx, 'api.approvals', { expr: (eb) => eb.ref('requested_at'), type: 'timestamptz' }, 'asc', (eb) => {
        const where: Expression<SqlBool>[] = [];
        if (query.status) where.push(eb('status', '=', query.status));
        if (query.type) where.push(eb('type', '=', query.type));
        if (query.resource_type) where.push(eb('resource_type', '=', query.resource_type));
        if (query.resource_id) where.push(eb('resource_id', '=', query.resource_id));
        // Timestamps go out at millisecond precision: compare at that precision, so a returned value excludes its own row.
        if (query.requested_after) {
          where.push(eb(eb.fn('date_trunc', [sql.lit('milliseconds'), eb.ref('requested_at')]), '>', sql<Date>`${query.requested_after}::timestamptz`));
        }
        if (query.updated_after) {
          where.push(eb(eb.fn('date_trunc', [sql.lit('milliseconds'), eb.ref('updated_at')]), '>', sql<Date>`${query.updated_after}::timestamptz`));
        }
        return where;
      });
    },
  },
  {
    kind: 'handler',
    operationId: 'getApproval', method: 'GET', path: '/v1/approvals/{approval_id}', tag: 'Approvals',
    summary: 'One approval (fetch it before acting on an approval event)', etag: true,
    params: Joi.object({ approval_id: idOf('apr').required() }),
    errors: ['APPROVAL_NOT_FOUND', 'APPROVAL_ACCESS_DENIED'],
    response: { status: 200, description: 'The approval', schema: schemas.approval },
    handler: async ({ tx, params }) => {
      const row = await tx.selectFrom('api.approvals').select(['doc', 'version']).where('id', '=', params.approval_id).executeTakeFirst();
      if (!row) {
        // Distinguish "exists but not for your Roles" from "no such approval", within the organization only.
        const { rows: [exists] } = await api.value('approval_exists', params.approval_id).execute(tx);
        if (exists?.value) throw new ApiError('APPROVAL_ACCESS_DENIED', 'your Roles do not cover this approval\'s resource');
        throw new ApiError('APPROVAL_NOT_FOUND', `no approval ${params.approval_id} in your organization`);
      }
      return { body: row.doc, version: row.version };
    },
  },
];

/** No endpoint approves, rejects, requests changes, delegates or substitutes: every attempt is answered
 * explicitly (403 API_PRINCIPAL_NOT_ALLOWED) rather than with 404, so integrations learn the rule. */
export const APPROVAL_DECISION_ACTIONS = ['approve', 'reject', 'request-changes', 'request_changes', 'delegate', 'substitute', 'decide', 'decision'];
const refusal = async (): Promise<never> => {
  throw new ApiError('API_PRINCIPAL_NOT_ALLOWED',
    'API Clients cannot approve, reject, request changes on, delegate or substitute approvers; a named user decides in the web interface');
};
export const approvalDecisionRefusals: Operation[] = [
  ...(['POST', 'PUT', 'PATCH'] as const).map((method): Operation => ({
    kind: 'handler',
    operationId: `refuseApprovalDecision${method}`, method, path: '/v1/approvals/{approval_id}/{action}', tag: 'Approvals',
    summary: 'Not available to API Clients: named users decide approvals', hidden: true,
    params: Joi.object({ approval_id: Joi.string().max(100).required(), action: Joi.string().max(64).required() }),
    body: Joi.any(), response: { status: 403, description: 'API_PRINCIPAL_NOT_ALLOWED' }, handler: refusal,
  })),
  ...(['PUT', 'PATCH', 'DELETE'] as const).map((method): Operation => ({
    kind: 'handler',
    operationId: `refuseApprovalChange${method}`, method, path: '/v1/approvals/{approval_id}', tag: 'Approvals',
    summary: 'Not available to API Clients: approvals are read-only', hidden: true,
    params: Joi.object({ approval_id: Joi.string().max(100).required() }),
    body: Joi.any(), response: { status: 403, description: 'API_PRINCIPAL_NOT_ALLOWED' }, handler: refusal,
  })),
];

