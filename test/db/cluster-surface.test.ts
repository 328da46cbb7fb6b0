// From the inside: what the cluster surface gives the
// runtime role when it sends plain SQL, with no HTTP in between. The view functions return what
// their views return and nothing without a context; api.in_organization runs a statement with the
// runtime role's own privileges; the outbox, the job queueing and the privilege procedures are not
// the runtime role's. On a cluster the same calls, outside a delegated call, fail closed.
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { oneConnection, tokenSha256 } from '../helpers/sql.ts';

t.test('the view functions, the statement call and the outbox, as the runtime role', async (t) => {
  const a = await startApp(t);
  const mine = await a.principal('member,manager');
  const theirs = await a.principal('member,manager');
  const created = await a.request({ method: 'POST', url: '/v1/projects', token: theirs.token, payload: { name: 'Theirs', code: 'THEIRS' },
    headers: { 'idempotency-key': 'k-theirs' } });
  t.equal(created.statusCode, 201, 'another organization has a project');
  const theirProject = created.json.id as string;
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());

  // Without a context: nothing, by list or by id.
  t.same(await rt`select count(*)::int as n from api.projects()`, [{ n: 0 }], 'api.projects() without a context: no rows');
  t.same(await rt`select count(*)::int as n from api.projects(${theirProject})`, [{ n: 0 }], 'api.projects(id) without a context: no row');
  t.same(await rt`select count(*)::int as n from api.organization()`, [{ n: 0 }], 'api.organization() without a context: no row');

  // Under my context: my rows only, even by another organization's id.
  const seen = await rt.begin(async (tx) => {
    const [b] = await tx`select outcome from api.begin_request(${mine.orgId}, ${tokenSha256(mine.token)})`;
    const [byId] = await tx`select count(*)::int as n from api.projects(${theirProject})`;
    const [all] = await tx`select count(*)::int as n from api.projects() where id = ${theirProject}`;
    const [org] = await tx`select array_agg(id) as ids from api.organization()`;
    return { outcome: b!.outcome, byId: byId!.n, all: all!.n, org: org!.ids };
  });
  // (On a cluster the context is signed in the organization's worker, which begin_request was
  // delegated to; these reads run on the coordinator, outside it, and see no organization at all.)
  t.same(seen, { outcome: 'ok', byId: 0, all: 0, org: CITUS_WORKERS.length ? null : [mine.orgId] },
    'another organization\'s project is not mine to read');

  // The statement call grants nothing: a table the runtime role may not read stays unreadable.
  const refused = await rt`select * from api.in_organization(${mine.orgId}, 'select count(*) from app.projects', '{}') as r(n bigint)`
    .then(() => 'read', (e: { code?: string }) => e.code);
  t.equal(refused, '42501', 'api.in_organization runs its statement as the runtime role (permission denied on app.projects)');

  // Not the runtime role's: the outbox, queueing a job, draining it, the privilege procedures.
  const [p] = await rt`
    select has_table_privilege('svc_runtime', 'app_private.job_outbox', 'select, insert, update, delete') as outbox,
           has_function_privilege('svc_runtime', 'app_private.queue_job(text, text, json, text, integer, timestamptz)', 'execute') as queue,
           has_function_privilege('svc_runtime', 'app_private.job_outbox_drain()', 'execute') as drain,
           has_function_privilege('svc_runtime', 'app_private.view_on_shards(regclass, text)', 'execute') as view_on_shards,
           has_function_privilege('svc_runtime', 'app_private.citus_copy_privileges()', 'execute') as copy,
           has_function_privilege('svc_runtime', 'app_private.citus_shard_privileges()', 'execute') as shards`;
  t.same(p, { outbox: false, queue: false, drain: false, view_on_shards: false, copy: false, shards: false },
    'the runtime role may not touch the outbox, queue or drain jobs, or run the privilege procedures');

  // Nor the worker's job functions, which run as their owner with the organization they are given:
  // called by the runtime role, each is refused outright.
  const jobs = await rt<{ fn: string }[]>`
    select p.oid::regprocedure::text as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'app_private' and has_function_privilege('svc_runtime', p.oid, 'execute')
       and p.proname in ('webhook_fanout', 'webhook_fanout_batch', 'webhook_fanout_any', 'webhook_fanout_organizations', 'webhook_claim',
                         'webhook_record_attempt', 'webhook_cancel', 'webhook_enqueue', 'webhook_recover', 'client_may_read',
                         'begin_delivery_context', 'accounting_sync_load', 'accounting_sync_record', 'file_scan_load',
                         'file_scan_record', 'ticket_reply_load', 'ticket_reply_record', 'report_run_start', 'report_run_execute',
                         'run_start', 'run_tool', 'run_note', 'run_settle', 'run_available_skills', 'chat_context',
                         'download_link', 'refuse_on_coordinator', 'purge_webhook_history')`;
  t.same(jobs.map((r) => r.fn), [], 'no job function is the runtime role\'s');
  t.match(await rt`select app_private.accounting_sync_load(${mine.orgId}, 'inv_x')`.then(() => 'ok', (e: { code?: string }) => e.code),
    '42501', 'a job function called by the runtime role: permission denied');
});
