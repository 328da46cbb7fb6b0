import Joi from 'joi';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { listQuery } from '../http/pagination.ts';
import { api, build } from '../db/api.ts';
import { getStatement, listStatement } from './common.ts';
import { schemas } from './schemas.ts';

const ROLE = Joi.string().valid('member', 'manager', 'finance', 'hr');

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

export const memberOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listMembers',
    method: 'GET',
    path: '/v1/members',
    tag: 'Members',
    summary: 'Members of the organization, ordered by id (normalized email)',
    query: Joi.object({
      status: Joi.string().valid('active', 'inactive').default('active'),
      search: Joi.string().trim().min(1).max(200).description('part of the display name, or an exact email'),
      role: ROLE.description('members holding this Role (requires member, manager or hr)'),
      ...listQuery,
    }),
    response: { status: 200, description: 'A page of members', schema: schemas.list(schemas.member) },
    statement: (ctx) => {
      const { query } = ctx;
      const checks = query.role ? [api.call('require_any_role', ['member', 'manager', 'hr'], 'filtering members by role')] : [];
      return listStatement(ctx, 'api.members', { expr: (eb) => eb.ref('id'), type: 'text' }, 'asc', (eb) => {
        const where: Expression<SqlBool>[] = [eb('status', '=', query.status)];
        if (query.role) where.push(eb('svc_roles', '@>', sql<string[]>`array[${query.role}]::text[]`));
        if (query.search) {
          const term: string = query.search;
          where.push(eb.or([
            eb(eb.fn('lower', [eb.ref('display_name')]), 'like', `%${escapeLike(term.toLowerCase())}%`),
            eb('id', '=', sql<string>`app_private.normalize_email(${term})`),
          ]));
        }
        return where;
      }, checks);
    },
  },
  {
    kind: 'statement',
    operationId: 'getMember',
    method: 'GET',
    path: '/v1/members/{member_id}',
    tag: 'Members',
    summary: 'One member, by URL-encoded email (case-insensitive)',
    etag: true,
    params: Joi.object({ member_id: Joi.string().min(3).max(320).required().description('the member\'s email, URL-encoded') }),
    errors: ['MEMBER_NOT_FOUND'],
    response: { status: 200, description: 'The member', schema: schemas.member },
    statement: ({ params }) => getStatement(build.selectFrom('api.members').select(['doc', 'version'])
      .where('id', '=', sql<string>`app_private.normalize_email(${params.member_id})`),
      () => new ApiError('MEMBER_NOT_FOUND', 'no member with this email in your organization')),
  },
];
