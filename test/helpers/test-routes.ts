// Operations registered only in tests: they exercise the shared write machinery
// (Idempotency-Key, If-Match, ETag) before the first real write endpoints exist.
import Joi from 'joi';
import { sql } from 'kysely';
import type { Operation } from '../../src/http/operation.ts';

const widget = Joi.object({ name: Joi.string().min(1).max(100).required() });

export const testOperations: Operation[] = [
  {
    kind: 'handler',
    operationId: 'testCreateWidget', method: 'POST', path: '/v1/_test/widgets', tag: 'Test', summary: 'test only',
    roles: ['manager'], idempotencyKey: true, body: widget,
    response: { status: 201, description: 'created', schema: Joi.object().unknown(true) },
    handler: async ({ tx, body }) => {
      // Slow enough that concurrent duplicates overlap.
      await sql`select pg_sleep(0.05)`.execute(tx);
      const { rows: [w] } = await sql<{ id: string; name: string; version: number }>`
        select * from api.test_widget_create(${body.name})`.execute(tx);
      return { body: { object: 'widget', ...w }, version: w!.version };
    },
  },
  {
    // The same create as a `command`: with a valid body it goes out with the key's claim.
    kind: 'command',
    operationId: 'testCommandWidget', method: 'POST', path: '/v1/_test/command-widgets', tag: 'Test', summary: 'test only',
    roles: ['manager'], idempotencyKey: true, body: widget,
    response: { status: 201, description: 'created', schema: Joi.object().unknown(true) },
    command: ({ body }) => ({
      // Slow enough that concurrent duplicates overlap.
      statement: sql`select jsonb_build_object('object', 'widget', 'id', w.id, 'name', w.name, 'version', w.version) as doc, w.version
        from pg_sleep(0.05), api.test_widget_create(${body.name}) w`,
    }),
  },
  {
    // A command that answers `rows` rows: anything but one must fail the transaction (500), not
    // leave the key claimed with no response.
    kind: 'command',
    operationId: 'testRowsCommand', method: 'POST', path: '/v1/_test/rows-commands', tag: 'Test', summary: 'test only',
    roles: ['manager'], idempotencyKey: true, body: Joi.object({ rows: Joi.number().integer().min(0).max(3).required() }),
    response: { status: 201, description: 'created', schema: Joi.object().unknown(true) },
    command: ({ body }) => ({
      statement: sql`select jsonb_build_object('object', 'widget', 'id', 'w_' || n) as doc, 1 as version
        from generate_series(1, ${body.rows}::integer) n`,
    }),
  },
  {
    kind: 'handler',
    operationId: 'testUpdateWidget', method: 'PATCH', path: '/v1/_test/widgets/{id}', tag: 'Test', summary: 'test only',
    roles: ['manager'], ifMatch: true, body: widget, params: Joi.object({ id: Joi.string().required() }),
    errors: ['RESOURCE_NOT_FOUND'],
    response: { status: 200, description: 'updated', schema: Joi.object().unknown(true) },
    handler: async ({ tx, body, params, ifMatch }) => {
      const { rows: [w] } = await sql<{ id: string; name: string; version: number }>`
        select * from api.test_widget_update(${params.id}, ${`{${ifMatch.join(',')}}`}::integer[], ${body.name})`.execute(tx);
      return { body: { object: 'widget', ...w }, version: w!.version };
    },
  },
  {
    kind: 'handler',
    operationId: 'testSleep', method: 'GET', path: '/v1/_test/sleep', tag: 'Test', summary: 'test only: a slow statement',
    query: Joi.object({ ms: Joi.number().integer().min(0).max(60_000).required() }),
    response: { status: 200, description: 'slept', schema: Joi.object().unknown(true) },
    handler: async ({ tx, query }) => {
      await sql`select pg_sleep(${query.ms / 1000})`.execute(tx);
      return { body: { object: 'sleep', ms: query.ms } };
    },
  },
];
