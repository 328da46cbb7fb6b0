// How a request's statement is rewritten for a Citus coordinator (src/db/cluster.ts): parameters
// become elements of one text array typed as PostgreSQL described them, api views become their
// functions, and nothing inside a string, a quoted name or a comment changes. The descriptions
// come from this server, as they do from a coordinator; the rewritten statement then runs here,
// through api.in_organization, and answers what the statement itself answers.
import t from 'tap';
import postgres from 'postgres';
import { codeSegments, clusterRouting, shardStatements } from '../../src/db/cluster.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';

t.test('code segments: strings, quoted names, comments and dollar quotes are not code', async (t) => {
  const text = `select $1, 'it''s $2' as "a ""$3""" -- $4\n, $5 /* $6 */ , $tag$ $7 $tag$, x$8`;
  const code = codeSegments(text).filter((s) => s.code).map((s) => s.text).join('|');
  t.notMatch(code, /\$[23467]/, 'the parameters inside the other parts are not seen');
  t.match(code, /\$1/);
  t.match(code, /\$5/);
  t.equal(codeSegments(text).map((s) => s.text).join(''), text, 'the segments are the text');
});

t.test('on the organization\'s worker a statement goes as it is, its api views read from the copies over its shard group', async (t) => {
  const onShard = shardStatements(['tasks', 'projects']);
  const statement = `select t.doc, 'api.tasks' as s, api.tasks(t.id) as f, "api"."projects" from api.tasks t, "api".projects p -- api.tasks
    where exists (select from api.task_notes) and x.api.tasks is null`;
  t.equal(onShard(statement, '102008'), `select t.doc, 'api.tasks' as s, api.tasks(t.id) as f, api_shard_102008.projects from api_shard_102008.tasks t, api_shard_102008.projects p -- api.tasks
    where exists (select from api.task_notes) and x.api.tasks is null`,
  'views in code and quoted, and nothing in a string, a comment, a function call, another name or a qualified column');
  t.equal(onShard(statement, '102009'), onShard(statement, '102009'), 'each shard its own text');
  t.match(onShard(statement, '102009'), /from api_shard_102009\.tasks t/);
  const call = 'select * from api.task_create($1, $2)';
  t.equal(onShard(call, '102008'), call, 'a command\'s call as it is');
});

t.test('a routed statement answers as the statement itself', async (t) => {
  const { adminUrl, runtimeUrl } = await createTestDatabase(t);
  const admin = postgres(adminUrl, oneConnection);
  const rt = postgres(runtimeUrl, oneConnection);
  t.teardown(async () => { await admin.end(); await rt.end(); });
  const views = (await admin<{ name: string }[]>`select relname as name from pg_class where relnamespace = 'api'::regnamespace and relkind = 'v'`)
    .map((r) => r.name);
  const routing = clusterRouting({
    views,
    serializers: rt.options.serializers as Record<number, (x: unknown) => string>,
    describe: async (q, p) => {
      const d = await rt.unsafe(q, p as never[]).describe();
      return { types: d.types, columns: d.columns.map((c) => ({ name: c.name, type: c.type })) };
    },
    typeNames: async (oids) => new Map((await admin<{ oid: number; name: string }[]>`
      select oid::int as oid, format_type(oid, null) as name from pg_type where oid = any(${oids}::oid[])`).map((r) => [r.oid, r.name])),
  });
  t.equal(routing.route('select 1', [], undefined), undefined, 'a statement that names no organization is not rewritten');
  const statement = `select $1::int + 1 as n, $2::jsonb ->> 'a' as a, $3 = any('{x,y}'::text[]) as found, $4::timestamptz as at,
                            $5::text[] as list, 'api.tasks $9' as literal, (select count(*) from api.tasks) as tasks, (select count(*) from "api"."projects") as projects, $6::numeric as money`;
  const params = [41, { a: 'b"c' }, 'y', new Date('2026-11-27T10:00:00Z'), ['a,b', 'c"d', null], '12345678901234567890.12'];
  const routed = await routing.route(statement, params, 'org_nowhere')!;
  t.ok(routed, 'a statement of an organization is routed');
  t.match(routed!.sql, /^select \* from api\.in_organization\(\$1, \$2, \$3::text\[\]\) as r\("n" integer, "a" text, "found" boolean, "at" timestamp with time zone, "list" text\[\], "literal" text, "tasks" bigint, "projects" bigint, "money" numeric\)$/);
  t.match(routed!.parameters[1], /from api\.tasks\(\)/, 'a view read becomes its function');
  t.match(routed!.parameters[1], /from api\.projects\(\)/, 'a quoted view name too');
  t.match(routed!.parameters[1], /'api\.tasks \$9'/, 'a string is left as it is');
  const [direct] = await rt.unsafe(statement, params as never[]);
  const [viaCall] = await rt.unsafe(routed!.sql, routed!.parameters as never[]);
  t.same(viaCall, direct, 'the same row, with the same types');

  const check = await routing.route(`select pg_sleep(0) as slept, $1::int as n`, [7], 'org_nowhere')!;
  t.same((await rt.unsafe(check!.sql, check!.parameters as never[]))[0], (await rt`select pg_sleep(0) as slept, 7 as n`)[0],
    'a column of a function returning void reads as it does on one server');

  const write = await routing.route('select from api.tasks where id = $1', ['tsk_x'], 'org_nowhere')!;
  t.match(write!.sql, /api\.in_organization_count/, 'a statement without columns answers its row count');
  t.same(write!.count, { command: 'SELECT' });
});

t.test('a transaction\'s statement is described on its own connection; a description that failed there is not shared', async (t) => {
  const own: string[] = [];
  const routing = clusterRouting({
    views: [],
    serializers: {},
    describe: async (q, p, on) => {
      if (on) return on.describe(q, p);
      own.push(q);
      return { types: [23], columns: [{ name: 'n', type: 23 }] };
    },
    typeNames: async () => new Map([[23, 'integer']]),
  });
  const described: string[] = [];
  const connection = (fails: boolean, gate: Promise<void>) => ({
    describe: async (q: string) => {
      described.push(q);
      await gate;
      if (fails) throw Object.assign(new Error('current transaction is aborted'), { code: '25P02' });
      return { types: [23], columns: [{ name: 'n', type: 23 }] };
    },
    rows: async <T>() => [] as T[],
  });
  let open!: () => void;
  const gate = new Promise<void>((r) => { open = r; });
  const statement = 'select $1::int as n';
  // The first request's transaction had failed: its description fails, and the second, which
  // arrived while it was under way, describes the statement on its own connection.
  const first = routing.route(statement, [1], 'org_a', false, connection(true, gate)) as Promise<unknown>;
  const second = routing.route(statement, [2], 'org_b', false, connection(false, Promise.resolve())) as Promise<unknown>;
  open();
  await t.rejects(first, { code: '25P02' }, 'the failed transaction sees its own error');
  t.match(await second, { sql: /api\.in_organization/ }, 'the other request is routed');
  t.same(described, [statement, statement], 'each described on its transaction\'s connection');
  t.same(own, [], 'none on the routing\'s connection of its own');
  t.ok(await routing.route(statement, [3], 'org_c'), 'the description is kept for the next request');
});
