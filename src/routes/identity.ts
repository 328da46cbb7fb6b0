import { sql } from 'kysely';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { schemas } from './schemas.ts';

export const identityOperations: Operation[] = [
  {
    kind: 'principal',
    operationId: 'getCurrentPrincipal',
    method: 'GET',
    path: '/v1/me',
    tag: 'Authentication and identity',
    summary: 'The calling API Client, with its current Roles and license state',
    response: { status: 200, description: 'The API Client principal', schema: schemas.principal },
  },
  {
    kind: 'handler',
    operationId: 'getOrganization',
    method: 'GET',
    path: '/v1/organization',
    tag: 'Authentication and identity',
    summary: "The client's organization",
    etag: true,
    response: { status: 200, description: 'The organization', schema: schemas.organization },
    handler: async ({ tx }) => {
      const row = await tx.selectFrom('api.organization')
        .select(['doc', 'version'])
        .where('id', '=', sql<string>`app.current_organization_id()`)
        .executeTakeFirst();
      if (!row) throw new ApiError('RESOURCE_NOT_FOUND', 'organization not found');
      return { body: row.doc, version: row.version! };
    },
  },
];

