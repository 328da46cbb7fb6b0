// The statements whose columns are computed (not a view's, not an api function's) declare them by
// name and type (Declared in src/db/api.ts); PostgreSQL's description of each, as the API sends
// it, must name the same columns with the same types.
import t from 'tap';
import postgres from 'postgres';
import { api, build } from '../../src/db/api.ts';
import { getStatement, listStatement, PAGE_COLUMNS, RESOURCE_COLUMNS } from '../../src/routes/common.ts';
import { TASK_SORTS } from '../../src/routes/tasks.ts';
import { inContext } from '../../src/http/operation/statement.ts';
import { ANSWER_COLUMNS, statementsOf } from '../../src/http/operation/command.ts';
import { WAKE_READ, WOKEN_COLUMNS } from '../../src/http/operation/wake.ts';
import { ApiError } from '../../src/http/errors.ts';
import { PRINCIPAL, PRINCIPAL_COLUMNS } from '../../src/http/operation/principal.ts';
import { FINISHED_COLUMNS, runFinished } from '../../src/routes/agents.ts';
import { BATCH_COLUMNS, downloadBatch } from '../../src/routes/reports.ts';
import { ID_COLUMNS, NEW_ENDPOINT_ID } from '../../src/routes/webhooks.ts';
import type { Caller, Endpoint } from '../../src/http/operation/endpoint.ts';
import { createTestDatabase } from '../helpers/database.ts';

const caller = { organizationId: 'org_x', tokenSha256: 'x', clientId: 'cli_x' } as Caller;

t.test('declared rows match what PostgreSQL describes', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const types = new Map((await sql<{ oid: number; typname: string }[]>`
    select oid::int, typname from pg_type where typname in ('text', 'bool', 'int4', 'jsonb', 'void')`).map((r) => [r.oid, r.typname]));
  const described = async (statement: { compile: (db: typeof build) => { sql: string; parameters: readonly unknown[] } }) => {
    const { sql: text, parameters } = statement.compile(build);
    const d = await sql.unsafe(text, parameters as never[]).describe();
    return Object.fromEntries(d.columns.map((c) => [c.name, types.get(c.type) ?? `oid ${c.type}`]));
  };
  const withContext = { request_outcome: 'text', found: 'bool' };

  const get = getStatement(api.rows('task_get', 'tsk_x'), () => new ApiError('TASK_NOT_FOUND', 'none'));
  t.same(await described(inContext(null, caller, get.query)), { ...withContext, ...RESOURCE_COLUMNS }, 'a one-resource read');

  const ctx = { query: { limit: 50 }, app: { cursorKey: Buffer.alloc(32) }, route: 'GET /v1/tasks', params: {} } as never;
  const list = listStatement(ctx, 'api.tasks', TASK_SORTS.created_at!, 'desc', (eb) => [eb('status', '=', 'todo')]);
  t.same(await described(inContext(null, caller, list.query, list.checks)), { ...withContext, ...PAGE_COLUMNS }, 'a list page');

  const endpoint = { op: { method: 'POST', path: '/v1/tasks', response: { status: 201 } }, roles: ['manager'] } as unknown as Endpoint;
  const [, answer] = statementsOf(endpoint, caller, { key: 'k', fingerprint: 'f' },
    { statement: api.rows('task_create', {}, null), location: '/v1/tasks/' });
  t.same(await described(answer!), ANSWER_COLUMNS, 'a command\'s answer');

  t.same(await described(WAKE_READ), WOKEN_COLUMNS, 'the wake-up read');
  t.same(await described({ compile: () => PRINCIPAL }), PRINCIPAL_COLUMNS, 'GET /v1/me');
  t.same(await described(runFinished('run_x')), FINISHED_COLUMNS, 'whether a run has ended');
  t.same(await described(downloadBatch('tok', 'rrun_x', 1, 100)), BATCH_COLUMNS, 'a report download\'s batch');
  t.same(await described(NEW_ENDPOINT_ID), ID_COLUMNS, 'a webhook endpoint\'s new id');
});
