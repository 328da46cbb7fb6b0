import Joi from 'joi';
import type { Operation } from '../http/operation.ts';
import { ApiError } from '../http/errors.ts';
import { schemas } from './schemas.ts';

export const objectSchemaOperations: Operation[] = [
  {
    kind: 'handler',
    operationId: 'listObjectSchemas', method: 'GET', path: '/v1/schemas', tag: 'Custom-field schemas',
    summary: 'Object types with custom fields, and their schema versions',
    response: { status: 200, description: 'A list of object_schema_summary', schema: schemas.list(schemas.objectSchemaSummary) },
    handler: async ({ tx }) => {
      const rows = await tx.selectFrom('api.object_schemas').select('summary').orderBy('object_type').execute();
      return { body: { object: 'list', data: rows.map((r) => r.summary), has_more: false, next_cursor: null } };
    },
  },
  {
    kind: 'handler',
    operationId: 'getObjectSchema', method: 'GET', path: '/v1/schemas/{object_type}', tag: 'Custom-field schemas',
    summary: 'The fields of an object type that the caller may read', etag: true,
    params: Joi.object({ object_type: Joi.string().max(64).required() }),
    errors: ['OBJECT_SCHEMA_NOT_FOUND'],
    response: { status: 200, description: 'The object_schema', schema: schemas.objectSchema },
    handler: async ({ tx, params }) => {
      const row = await tx.selectFrom('api.object_schemas').select(['doc', 'schema_version'])
        .where('object_type', '=', params.object_type).executeTakeFirst();
      if (!row) throw new ApiError('OBJECT_SCHEMA_NOT_FOUND', `no object type ${params.object_type}; see GET /v1/schemas`);
      return { body: row.doc, version: row.schema_version };
    },
  },
];
