// A request's first steps on a Citus cluster: a token from POST /oauth/token and
// the principal from GET /v1/me, each answered by one call delegated to the worker that holds the
// organization's rows; the context that call signs lives in that worker's backend; and a statement
// string the runtime role sends never runs on a worker as anything but the runtime role.
// Runs under `make test-citus`; elsewhere it skips.
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { oneConnection, tokenSha256 } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';

/** Functions the runtime role may call that run as a role able to log in (security definer, owned by
 * the migrations' superuser) and are not delegated, each with where it reads: on the coordinator
 * they must touch no distributed table, or Citus would open worker connections as that role. */
const COORDINATOR_ONLY: Record<string, string> = {
  'api.signing_keys_current()': 'app_private.signing_keys (coordinator)',
  'api.signing_key_bootstrap(text,text,jsonb,text)': 'app_private.signing_keys (coordinator)',
  'api.service_schema_version()': 'public.schema_migrations (coordinator)',
  'api.rate_limit_lease(text,bigint,integer,integer)': 'app_private.rate_limit_buckets (coordinator)',
  'api.rate_limit_release(text[],bigint[],integer[])': 'app_private.rate_limit_buckets (coordinator)',
  'app_private.context_ok()': "app_private.context_keys (each node's own)",
  'app_private.bi_context()': 'app_private.bi_logins (coordinator)',
  'api.run_wake_key()': 'app_private.run_wake_key (a reference table, with a copy on the coordinator)',
  'app_private.may_read_internal_notes()': 'no table (may_read_tickets() reads, and is refused on the coordinator)',
};
/** Not yet delegated nor refused on the coordinator (docs/scaling.md): on a
 * cluster, these still read distributed tables from the coordinator when called there directly (the
 * service status counts every organization's outbox, by design). The list may only shrink. */
const NOT_YET_DELEGATED = [
  'api.service_outbox_status()',
];

if (CITUS_WORKERS.length === 0) {
  t.plan(0, 'runs on a Citus cluster: make test-citus');
} else {
  t.test('a token and the principal, from the organization\'s worker', async (t) => {
    const a = await startApp(t);
    const p = await a.principal('member,manager');
    const me = await a.request({ url: '/v1/me', token: p.token });
    t.equal(me.statusCode, 200, 'GET /v1/me');
    t.match(me.json, { object: 'api_client_principal', id: p.id, organization_id: p.orgId, svc_roles: ['member', 'manager'] });
    const other = await a.principal('member');
    t.equal((await a.request({ url: '/v1/me', token: other.token })).json.organization_id, other.orgId, 'another organization\'s client');

    const rt = postgres(a.runtimeUrl, oneConnection);
    t.teardown(() => rt.end());
    // Delegated: the plan is the call, sent whole to one worker.
    const plan = (await rt.unsafe(`explain select outcome from api.begin_request('${p.orgId}', 'x', null, false)`))
      .map((r: any) => r['QUERY PLAN']).join('\n');
    t.match(plan, /Custom Scan \(Citus Adaptive\)[\s\S]*Task Count: 1/, 'begin_request is delegated to one worker');
    const [where] = await rt.begin(async (tx) => {
      const [b] = await tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(p.token)})`;
      const [c] = await tx`select app.current_organization_id() as org`;
      return [{ outcome: b!.outcome, coordinator: c!.org }];
    });
    t.same(where, { outcome: 'ok', coordinator: null }, 'the signed context is in the worker\'s backend, not the coordinator\'s');
  });

  t.test('no statement string of the runtime role runs on a worker as another role', async (t) => {
    const a = await startApp(t);
    const p = await a.principal('member,manager');
    const rt = postgres(a.runtimeUrl, oneConnection);
    t.teardown(() => rt.end());
    // ../shared/citus/NOTES.md: with SET propagation on, Citus replays the whole query string of a
    // SET LOCAL on every worker connection the transaction opens later, as that connection's role.
    // The payload does nothing on the coordinator and names its role wherever it is replayed.
    const inject = `set local citus.propagate_set_commands = 'local'; set local statement_timeout = '30s';
      do $$ begin if not citus_is_coordinator() then raise exception 'replayed on a worker as %', current_user; end if; end $$`;
    const calls: [string, (tx: postgres.TransactionSql) => Promise<unknown>][] = [
      ['begin_request', (tx) => tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(p.token)})`],
      ['authenticate_client', (tx) => tx`select outcome from api.authenticate_client(${p.orgId}, ${p.id}, ${p.secret})`],
      ['access_token_record', (tx) => tx`select api.access_token_record(${p.orgId}, ${p.id}, ${p.secret}, sha256('probe'::bytea), now() + interval '1 hour')`],
      ['client_organization', (tx) => tx`select api.client_organization(${p.id})`],
    ];
    for (const [name, call] of calls) {
      const outcome = await rt.begin(async (tx) => {
        await tx.unsafe(inject);
        await call(tx);
        return 'not replayed';
      }).catch((e) => String(e.message));
      // A delegated call opens its worker connection as the caller: the probe is replayed there, as
      // svc_runtime (it would name any other role); the directory is the coordinator's own table.
      t.equal(outcome, name === 'client_organization' ? 'not replayed' : 'replayed on a worker as svc_runtime', `${name}: ${outcome}`);
    }
    // What else the runtime role can call runs as itself, as a role that cannot log in, delegated
    // whole to one worker, or on the coordinator's own tables.
    const asOthers = await a.admin<{ fn: string }[]>`
      select p.oid::regprocedure::text as fn
        from pg_proc p join pg_roles r on r.oid = p.proowner join pg_namespace n on n.oid = p.pronamespace
        left join pg_dist_object o on o.classid = 'pg_proc'::regclass and o.objid = p.oid
       where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting')
         and has_function_privilege('svc_runtime', p.oid, 'execute') and p.prosecdef and r.rolcanlogin
         and not coalesce(o.distribution_argument_index is not null and o.force_delegation, false)
         -- Refused on the coordinator (migration 20261205002100): they run only inside a delegated call.
         and position('perform app_private.refuse_on_coordinator(' in p.prosrc) = 0
       order by 1`;
    const open = asOthers.map((r) => r.fn).filter((fn) => !COORDINATOR_ONLY[fn]);
    t.same(open, NOT_YET_DELEGATED, 'every other function that runs as a login role is delegated (the list of those not yet is in docs/scaling.md)');
    // Called directly on the coordinator, a command that runs as a login role refuses to run there.
    for (const call of [`api.invoice_void('inv_x')`, `api.file_upload_begin('upl_x.org_x.${'0'.repeat(64)}')`, `api.ticket_search_ids('x')`]) {
      const e = await rt.begin(async (tx) => {
        await tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(p.token)})`;
        return tx.unsafe(`select * from ${call}`);
      }).then(() => 'ok', (e) => `${e.code} ${e.message}`);
      t.equal(e, 'SV500 NOT_IN_ITS_WORKER', `${call.split('(')[0]}: refused on the coordinator`);
    }
    // Citus's functions that run SQL on other nodes are not the runtime role's.
    for (const fn of ['run_command_on_workers($$select 1$$)', 'run_command_on_shards($$app.tasks$$, $$select 1$$)',
      'assign_distributed_transaction_id(0, 1, now())']) {
      const e = await rt.unsafe(`select ${fn}`).then(() => 'ok', (e) => e.code);
      t.equal(e, '42501', `${fn.split('(')[0]} is refused`);
    }
  });

  t.test('a delegated UPDATE assigning a text parameter, as the runtime role: refused, no worker crashes', async (t) => {
    // Citus 13.2.2 crashes a worker (signal 11 in its deparser, get_update_query_targetlist_def) on
    // this statement shape sent through api.in_organization by a role that may update the table
    // (docs/scaling.md). The runtime role may update no table: it must be refused first, and every
    // node must still answer after it.
    const a = await startApp(t);
    const p = await a.principal('member,manager');
    const rt = postgres(a.runtimeUrl, oneConnection);
    t.teardown(() => rt.end());
    // A session on each worker, open before: a backend's crash ends every session of its server,
    // and the driver would answer the next query from a new one (another backend pid).
    const workers = CITUS_WORKERS.map((node) => postgres(editDatabaseUrl(node, { database: new URL(a.adminUrl).pathname.slice(1) }), oneConnection));
    t.teardown(() => Promise.all(workers.map((w) => w.end())));
    const pid = (w: postgres.Sql) => w<{ pid: number }[]>`select pg_backend_pid() as pid`.then((r) => r[0]!.pid);
    const before = await Promise.all(workers.map(pid));
    const update = `update app.projects set name = ($1[1]::text) where organization_id = '${p.orgId}'::text`;
    for (const call of ['api.in_organization_count($1, $2, $3::text[])', 'api.in_organization($1, $2, $3::text[]) as r(id text)']) {
      const e = await rt.begin(async (tx) => {
        await tx`select outcome from api.begin_request(${p.orgId}, ${tokenSha256(p.token)})`;
        return tx.unsafe(`select * from ${call}`, [p.orgId, call.includes('count') ? update : `${update} returning id`, ['renamed']]);
      }).then(() => 'ok', (e) => e.code);
      t.equal(e, '42501', `${call.split('(')[0]}: refused (no update grant)`);
    }
    t.same(await Promise.all(workers.map(pid)), before, 'each worker\'s session lives on (the same backend): no backend crashed');
    t.equal((await a.request({ url: '/v1/me', token: p.token })).statusCode, 200, 'and the request after it is served');
  });
}
