import Joi from 'joi';
import { sql } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { listQuery, decodeCursor, toPage } from '../http/pagination.ts';
import { schemas } from './schemas.ts';

const ROLE = Joi.string().valid('member', 'manager', 'finance', 'hr');

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

export const memberOperations: Operation[] = [
  {
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
    handler: async ({ tx, query, app, route }) => {
      const cursor = { secret: app.cursorKey, route, query };
      const after = decodeCursor(app.cursorKey, route, query);
      if (query.role) {
        await sql`select api.require_any_role('{member,manager,hr}', 'filtering members by role')`.execute(tx);
      }
      let q = tx.selectFrom('api.members').select(['id', 'doc']).where('status', '=', query.status);
      if (query.role) q = q.where(sql<boolean>`svc_roles @> array[${query.role}]::text[]`);
      if (query.search) {
        const term: string = query.search;
        q = q.where((eb) => eb.or([
          eb(sql`lower(display_name)`, 'like', `%${escapeLike(term.toLowerCase())}%`),
          eb('id', '=', sql<string>`app_private.normalize_email(${term})`),
        ]));
      }
      if (after) q = q.where('id', '>', String(after[0]));
      const rows = await q.orderBy('id').limit(query.limit + 1).execute();
      return { body: toPage(rows, query.limit, (r) => r.doc, (r) => [r.id], cursor) };
    },
  },
  {
    operationId: 'getMember',
    method: 'GET',
    path: '/v1/members/{member_id}',
    tag: 'Members',
    summary: 'One member, by URL-encoded email (case-insensitive)',
    etag: true,
    params: Joi.object({ member_id: Joi.string().min(3).max(320).required().description('the member\'s email, URL-encoded') }),
    errors: ['MEMBER_NOT_FOUND'],
    response: { status: 200, description: 'The member', schema: schemas.member },
    handler: async ({ tx, params }) => {
      const row = await tx.selectFrom('api.members')
        .select(['doc', 'version'])
        .where('id', '=', sql<string>`app_private.normalize_email(${params.member_id})`)
        .executeTakeFirst();
      if (!row) throw new ApiError('MEMBER_NOT_FOUND', 'no member with this email in your organization');
      return { body: row.doc, version: row.version! };
    },
  },
];
