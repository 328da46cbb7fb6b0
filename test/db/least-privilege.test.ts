// Least privilege inside the database: every function a request, a BI session or a job reaches
// belongs to a role under the row policies (listed with its owner), and a command or
// the token check with its WHERE removed still stays in one organization; the client directory
// read only through its one lookup and under row security; BI passwords that reach the server only
// as SCRAM verifiers; a database that PUBLIC can neither connect to nor make temporary objects in;
// reporting views that are security barriers; and delegated functions that the runtime role and BI
// logins cannot use to take a Citus node down. On one server and, under `make test-citus`, on the cluster.
import t from 'tap';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { startApp, CITUS_WORKERS, oneServer } from '../helpers/app.ts';
import { beginRequest, failure, inRequest, oneConnection, refusedOutsideItsOrganization, tokenSha256 } from '../helpers/sql.ts';
import { scramVerifier } from '../../src/db/scram.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';
import { adminUrlFrom } from '../../src/config.ts';
import { run as svcAdmin } from '../../src/admin/cli.ts';

const where = CITUS_WORKERS.length ? 'on the Citus cluster' : 'on one server';

t.test(`the client directory is read through its lookup alone (${where})`, async (t) => {
  const a = await startApp(t);
  const admin = a.admin;
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  const [orgA, orgB] = [await a.createOrg(), await a.createOrg()];
  const [clientA, clientB] = [await a.createClient(orgA), await a.createClient(orgB)];

  const [table] = await admin`select relrowsecurity, relforcerowsecurity from pg_class where oid = 'app_private.client_directory'::regclass`;
  t.same(table, { relrowsecurity: true, relforcerowsecurity: true }, 'row security enabled and forced');
  const readers = await admin`select r.rolname from pg_roles r
    where has_table_privilege(r.oid, 'app_private.client_directory', 'select') and not r.rolsuper and r.rolname !~ '^pg_' order by 1`;
  t.same(readers.map((r) => r.rolname), ['svc_admin', 'svc_deploy', 'svc_directory', 'svc_mover', 'svc_schema'],
    'svc_directory (the lookup) and svc_admin (the control plane, which writes it) alone may select from it (besides its owner, svc_schema, the deploy login acting as it and svc_mover, a member of it that moves and restores rows; superusers and pg_read_all_data)');
  const [owner] = await admin`select r.rolname, r.rolbypassrls from pg_proc p join pg_roles r on r.oid = p.proowner
    where p.oid = 'api.client_organization(text)'::regprocedure`;
  t.same(owner, { rolname: 'svc_directory', rolbypassrls: false }, 'the lookup is owned by svc_directory, which does not bypass row security');
  const [owns] = await admin`select count(*)::int as n from pg_proc p where p.proowner = 'svc_directory'::regrole`;
  t.equal(owns!.n, 1, 'and it owns nothing else');

  t.equal((await rt`select api.client_organization(${clientA.id}) as org`)[0]!.org, orgA, 'the lookup answers the client\'s organization');
  t.ok(await a.token(clientB), 'and the token endpoint, which asks it, issues tokens');
  t.equal((await rt`select api.client_organization('apic_none') as org`)[0]!.org, null, 'and nothing for an unknown client');

  // Inside: svc_api (the surface's owner) and svc_directory itself, with no lookup under way.
  t.match(await failure(admin.begin(async (tx) => {
    await tx`set local role svc_api`;
    return tx`select * from app_private.client_directory`;
  })), /^42501 /, 'svc_api may not read it');
  const seen = await admin.begin(async (tx) => {
    await tx`set local role svc_directory`;
    return tx`select * from app_private.client_directory`;
  });
  t.equal(seen.length, 0, 'svc_directory outside its lookup sees no row');

  // The lookup with its WHERE removed still shows the one client it was asked for.
  await admin.unsafe(`create or replace function api.client_organization(p_client_id text) returns text
    language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
    declare v text;
    begin
      perform set_config('svc.directory_client', coalesce(p_client_id, ''), true);
      select string_agg(d.organization_id, ',' order by d.organization_id) into v from app_private.client_directory d;
      perform set_config('svc.directory_client', '', true);
      return v;
    end $$`);
  t.equal((await rt`select api.client_organization(${clientB.id}) as org`)[0]!.org, orgB,
    'a lookup without its WHERE reads the asked client\'s row and no other');
});

t.test(`a BI login's password reaches the server as a SCRAM verifier only (${where})`, async (t) => {
  const a = await startApp(t);
  const admin = a.admin;
  const orgId = await a.createOrg();
  const password = randomBytes(16).toString('hex');
  t.equal(await failure(admin`select * from control.reporting_grant(${orgId}, '{manager}', ${password})`), 'SVV22 VALIDATION_FAILED',
    'a password as text is refused');
  t.equal(await failure(admin`select * from control.reporting_grant(${orgId}, '{manager}', null)`), 'SVV22 VALIDATION_FAILED',
    'and so is none');
  const [grant] = await admin`select * from control.reporting_grant(${orgId}, '{manager}', ${scramVerifier(password)})`;
  t.teardown(() => admin`select control.reporting_revoke(${grant!.role_name})`.catch(() => {}));
  t.same(Object.keys(grant!), ['role_name'], 'the grant answers the login\'s name, and no password');
  const [stored] = await admin`select rolpassword from pg_authid where rolname = ${grant!.role_name}`;
  t.match(stored!.rolpassword, /^SCRAM-SHA-256\$4096:/, 'the login\'s password is stored as the verifier svc-admin computed');
  const bi = postgres(editDatabaseUrl(a.adminUrl, { username: grant!.role_name, password }), oneConnection);
  t.equal((await bi`select current_user as u`)[0]!.u, grant!.role_name, 'and the password behind it logs in');
  await bi.end();
  // svc-admin's own: the password printed once, the verifier sent.
  const cli = await a.cli('reporting', 'grant', '--org', orgId, '--roles', 'finance');
  const viaCli = postgres(cli.connection_string, oneConnection);
  t.equal((await viaCli`select current_user as u`)[0]!.u, cli.role, 'svc-admin reporting grant prints a password that logs in');
  await viaCli.end();
  const [cliStored] = await admin`select rolpassword from pg_authid where rolname = ${cli.role}`;
  t.match(cliStored!.rolpassword, /^SCRAM-SHA-256\$4096:/, 'as a SCRAM verifier');
});

t.test(`PUBLIC may neither connect to the database nor make temporary objects in it (${where})`, async (t) => {
  const template = process.env.SVC_TEST_TEMPLATE!;
  for (const [i, server] of [process.env.SVC_TEST_SERVER_URL!, ...CITUS_WORKERS].entries()) {
    const node = i === 0 ? 'the database' : `worker ${i}'s copy`;
    const sql = postgres(server, oneConnection);
    const acl = await sql`select coalesce(nullif(a.grantee, 0)::regrole::text, 'PUBLIC') as grantee, a.privilege_type as privilege
      from pg_database d, aclexplode(d.datacl) a where d.datname = ${template} order by 1, 2`;
    await sql.end();
    const granted = (who: string) => acl.filter((r) => r.grantee === who).map((r) => r.privilege).sort();
    t.same(granted('PUBLIC'), [], `${node} (as migrated): PUBLIC holds nothing`);
    t.same(granted('svc_runtime'), ['CONNECT'], `${node}: svc_runtime may connect, and make nothing temporary`);
    t.same(granted('svc_reporting'), ['CONNECT'], `${node}: BI logins may connect through svc_reporting`);
  }
});

t.test(`the reporting views are security barriers (${where})`, async (t) => {
  const a = await startApp(t);
  const database = new URL(a.adminUrl).pathname.slice(1);
  for (const [i, url] of [a.adminUrl, ...CITUS_WORKERS.map((w) => editDatabaseUrl(w, { database }))].entries()) {
    const sql = postgres(url, oneConnection);
    const views = await sql`select c.oid::regclass::text as view, coalesce('security_barrier=true' = any (c.reloptions), false) as barrier
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('reporting', 'reporting_private') and c.relkind = 'v' order by 1`;
    await sql.end();
    if (i === 0) t.ok(views.length >= 8, `${views.length} reporting views`);
    t.same(views.filter((v) => !v.barrier).map((v) => v.view), [], `${i ? `worker ${i}: ` : ''}every one is a security barrier`);
  }
});

t.test(`a NULL distribution argument takes no node down (${where})`, async (t) => {
  const a = await startApp(t);
  const admin = a.admin;
  const orgId = await a.createOrg();
  const password = randomBytes(16).toString('hex');
  const [grant] = await admin`select * from control.reporting_grant(${orgId}, '{manager}', ${scramVerifier(password)})`;
  t.teardown(() => admin`select control.reporting_revoke(${grant!.role_name})`.catch(() => {}));
  const callers = [
    { name: 'svc_runtime', role: 'svc_runtime', url: a.runtimeUrl },
    { name: 'a BI login', role: grant!.role_name as string, url: editDatabaseUrl(a.adminUrl, { username: grant!.role_name, password }) },
    // The API logs in to the workers too (a request runs on its organization's worker), where
    // Citus delegates as it does on the coordinator. A BI login exists on the coordinator alone.
    ...CITUS_WORKERS.map((w, i) => ({ name: `svc_runtime on worker ${i + 1}`, role: 'svc_runtime', url: editDatabaseUrl(a.runtimeUrl, { hosts: new URL(w).host }) })),
  ];
  // Every function Citus delegates by a distribution argument (on one server: every function whose
  // first argument is an organization), called with NULL for each argument.
  const delegated = CITUS_WORKERS.length
    ? await admin`select o.objid::regprocedure::text as fn from pg_dist_object o
        where o.classid = 'pg_proc'::regclass and o.distribution_argument_index is not null order by 1`
    : await admin`select p.oid::regprocedure::text as fn from pg_proc p
        where p.pronamespace in ('api'::regnamespace, 'app_private'::regnamespace) and p.proargnames[1] = 'p_organization_id' and p.prokind = 'f' order by 1`;
  t.ok(delegated.length > 0, `${delegated.length} functions ${CITUS_WORKERS.length ? 'delegated by organization' : 'taking an organization first'}`);
  // A bystander on every node: a crash would end its session with every other.
  const database = new URL(a.adminUrl).pathname.slice(1);
  const nodes = [a.adminUrl, ...CITUS_WORKERS.map((w) => editDatabaseUrl(w, { database }))];
  const bystanders = nodes.map((url) => postgres(url, oneConnection));
  t.teardown(() => Promise.all(bystanders.map((b) => b.end())));
  const pids = await Promise.all(bystanders.map(async (b) => (await b`select pg_backend_pid() as pid`)[0]!.pid));
  for (const caller of callers) {
    const callable = await admin`select f.fn, array_to_string(array(select 'null::' || format_type(x, null)
        from unnest(p.proargtypes::oid[]) x), ', ') as args
      from unnest(${delegated.map((d) => d.fn)}::text[]) f(fn)
      join pg_proc p on p.oid = f.fn::regprocedure
     where has_function_privilege(${caller.role}, p.oid, 'execute') and has_schema_privilege(${caller.role}, p.pronamespace, 'usage')`;
    const sql = postgres(caller.url, oneConnection);
    for (const f of callable) {
      const name = (f.fn as string).replace(/\(.*/, '');
      // In autocommit and inside a transaction (where Citus delegates only functions forced to).
      const alone = await failure(sql.unsafe(`select ${name}(${f.args})`));
      const inside = await failure(sql.begin((tx) => tx.unsafe(`select ${name}(${f.args})`)));
      t.notMatch(`${alone} ${inside}`, /ECONNRESET|CONNECTION_CLOSED|terminat/i, `${caller.name}: ${f.fn} with NULLs answers (${alone}; in a transaction: ${inside})`);
    }
    t.pass(`${caller.name}: ${callable.length} callable`);
    await sql.end();
  }
  const after = await Promise.all(bystanders.map(async (b) => (await b`select pg_backend_pid() as pid`.catch(() => [{ pid: 'gone' }]))[0]!.pid));
  t.same(after, pids, 'every node\'s other sessions are still there');
});

t.test(`no function a request or a BI login may call runs as a superuser (${where})`, async (t) => {
  const a = await startApp(t);
  const definers = await a.admin`select p.oid::regprocedure::text as fn, r.rolname as owner, r.rolsuper or r.rolbypassrls as above_policies,
      has_function_privilege('svc_runtime', p.oid, 'execute') as runtime,
      has_function_privilege('svc_reporting', p.oid, 'execute') as reporting
    from pg_proc p join pg_roles r on r.oid = p.proowner join pg_namespace n on n.oid = p.pronamespace
   where p.prosecdef and n.nspname in ('api', 'app', 'app_private', 'control', 'reporting', 'reporting_private', 'skills')
   order by 1`;
  t.ok(definers.length > 150, `${definers.length} security-definer functions`);
  const above = definers.filter((d) => d.above_policies);
  const reachable = above.filter((d) => d.runtime || d.reporting).map((d) => d.fn);
  t.same(reachable, [], 'none that svc_runtime or a BI login may execute belongs to a superuser or a role that bypasses row security');
  t.same(above.map((d) => d.fn), [], 'nor does any other: triggers and the helpers of jobs and the control plane included');
  const owners = [...new Set(definers.filter((d) => !d.above_policies).map((d) => d.owner as string))].sort();
  t.same(owners, ['svc_api', 'svc_directory', 'svc_gate', 'svc_owner', ...(CITUS_WORKERS.length ? ['svc_relay'] : []), 'svc_schema', 'svc_status'], 'the owners under the policies');
  // The schema's owner (no policy names it, and it owns the tables) keeps the definers that make a
  // cluster's objects on the workers (DDL), none of which a request or a BI login may call; the
  // worker's job calls the one without arguments.
  const schemaOwners = definers.filter((d) => d.owner === 'svc_schema');
  t.same(schemaOwners.map((d) => d.fn), ['app_private.citus_context_keys()', 'app_private.citus_drop_shard_views()',
    'app_private.citus_prepare_if_needed()', 'app_private.citus_refresh_shard_views()'], 'svc_schema owns the four that make a cluster\'s objects on its workers');
  t.same(schemaOwners.filter((d) => d.runtime || d.reporting).map((d) => d.fn), [], 'none of which svc_runtime or a BI login may execute');
  const [schemas] = await a.admin`select array_agg(distinct format('%s %s', p.proowner::regrole, p.pronamespace::regnamespace)) as missing
    from pg_proc p where p.proowner::regrole::text like 'svc\_%' and not has_schema_privilege(p.proowner, p.pronamespace, 'usage')`;
  t.same(schemas!.missing, null, 'each owner uses the schemas of what it owns (a Citus node being added refuses a function otherwise)');
  const [roles] = await a.admin`select bool_or(rolsuper or rolbypassrls or rolcanlogin) as any from pg_roles
    where rolname in ('svc_api', 'svc_directory', 'svc_gate', 'svc_owner', 'svc_operator', 'svc_relay')`;
  t.equal(roles!.any, false, 'none of them is a superuser, bypasses row security or logs in');
  // svc_status logs in only as Citus's connections to the workers do, with no password of its own.
  const [status] = await a.admin`select rolsuper, rolbypassrls, rolpassword is null as no_password,
      (select array_agg(p.oid::regprocedure::text) from pg_proc p where p.proowner = r.oid) as owns
    from pg_authid r where rolname = 'svc_status'`;
  t.same(status, { rolsuper: false, rolbypassrls: false, no_password: true, owns: ['api.service_outbox_status()'] },
    'svc_status owns the service status alone, with no password');
});

t.test(`the service status counts every organization's waiting work and reads nothing else (${where})`, async (t) => {
  const a = await startApp(t);
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  const [status] = await rt`select * from api.service_outbox_status()`;
  t.ok(status, 'svc_runtime reads the status');
  const asStatus = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    await tx`set local role svc_status`;
    return fn(tx);
  }) as Promise<T>;
  const seen = await asStatus(async (tx) => [
    (await tx`select count(*)::int as n from app.events where not fanout_pending`)[0]!.n,
    (await tx`select count(*)::int as n from app.webhook_deliveries where status <> 'pending'`)[0]!.n,
  ]).catch((e: Error) => e);
  if (seen instanceof Error) {
    // On a cluster: reached only as svc_status's own connections to the workers, or refused.
    t.ok(refusedOutsideItsOrganization(seen) || /svc_status/.test(seen.message), `on a cluster: ${seen.message}`);
  } else {
    t.same(seen, [0, 0], 'of events and deliveries, only those waiting');
  }
  t.match(await failure(asStatus((tx) => tx`select type from app.events`)), /^42501 /, 'no other column of an event');
  t.match(await failure(asStatus((tx) => tx`select endpoint_id from app.webhook_deliveries`)), /^42501 /, 'nor of a delivery');
});

t.test('the status page\'s policies hold for svc_status itself, not for its members', oneServer('a role made for the test, reached by SET ROLE'), async (t) => {
  // svc_schema is a member of svc_status, and a shard move validates foreign keys as svc_schema:
  // events waiting for their fan-out must not show to it without their organizations.
  const a = await startApp(t);
  const org = await a.createOrg();
  await a.admin`insert into app.events (organization_id, type, resource_type, resource_id, resource_version, fanout_pending)
    values (${org}, 'project.created', 'project', 'prj_status_test', 1, true)`;
  const member = `test_status_member_${process.pid}`;
  await a.admin.unsafe(`create role ${member} nologin in role svc_status`);
  t.teardown(() => a.admin.unsafe(`drop role if exists ${member}`));
  const count = (role: string) => a.admin.begin(async (tx) => {
    await tx.unsafe(`set local role ${role}`);
    return (await tx`select count(*)::int as n from app.events where fanout_pending`)[0]!.n as number;
  });
  t.ok(await count('svc_status') >= 1, 'svc_status sees the event waiting for its fan-out');
  t.equal(await count(member), 0, 'a member of svc_status sees none');
});

t.test(`a command with its WHERE removed reads and changes only its request's organization (${where})`, async (t) => {
  const a = await startApp(t);
  const rt = postgres(a.runtimeUrl, oneConnection);
  t.teardown(() => rt.end());
  const [orgA, orgB] = [await a.createOrg(), await a.createOrg()];
  const [clientA, clientB] = [await a.createClient(orgA), await a.createClient(orgB)];
  for (const org of [orgA, orgB]) {
    await a.admin`insert into app.customers (organization_id, id, kind, name) values (${org}, ${`cus_${org.slice(-8)}`}, 'billing', 'Customer')`;
  }
  // Tokens of both organizations, so the gate's table holds another organization's rows too.
  for (const client of [clientA, clientB]) await rt.begin((tx) => beginRequest(tx as never, client));

  // svc_owner: a command whose body reads and writes by the organization it is handed, not the request's.
  await a.admin.unsafe(`create or replace function api.ticket_search_ids(p_query text) returns setof text
    language plpgsql stable security definer rows 100 set search_path = pg_catalog, pg_temp as $$
    begin
      return query select 'seen:' || count(*) from app.customers c where c.organization_id = p_query;
      return query select 'all:' || count(*) from app.customers c;
    end $$`);
  await a.admin.unsafe(`create or replace function api.approval_exists(p_id text) returns boolean
    language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
    declare n integer;
    begin
      update app.customers c set name = 'Changed' where c.organization_id = p_id;
      get diagnostics n = row_count;
      return n > 0;
    end $$`);
  const asA = async <T>(fn: (q: (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>) => Promise<T>) =>
    rt.begin(async (tx) => {
      const r = await beginRequest(tx as never, clientA);
      t.equal(r.outcome, 'ok');
      return fn(await inRequest(t, a.runtimeUrl, tx as never, orgA));
    });
  const seen = await asA((q) => q`select api.ticket_search_ids(${orgB}) as r`).catch((e) => e);
  if (seen instanceof Error) {
    t.ok(refusedOutsideItsOrganization(seen), `on a cluster Citus refuses the other organization's shard: ${seen.message}`);
  } else {
    t.same(seen.map((r: any) => r.r), ['seen:0', 'all:1'], 'under organization A\'s context it sees none of B\'s customers, and of all only A\'s');
  }
  const changed = await asA((q) => q`select api.approval_exists(${orgB}) as r`).catch((e) => e);
  if (changed instanceof Error) t.ok(refusedOutsideItsOrganization(changed), `refused on a cluster: ${changed.message}`);
  else t.equal(changed[0].r, false, 'and changes none of them');
  const [b] = await a.admin`select name from app.customers where organization_id = ${orgB}`;
  t.equal(b!.name, 'Customer', 'organization B\'s customer is as it was');
  t.equal((await asA((q) => q`select api.approval_exists(${orgA}) as r`))[0].r, true, 'while its own organization\'s changes');

  // svc_gate: the token check with its WHERE removed reads the tokens of the organization asked about alone.
  await a.admin.unsafe(`create or replace function api.begin_request(p_organization_id text, p_token_sha256 text, p_required_roles text[] default null, p_context boolean default true)
    returns table(outcome text, organization_id text, svc_roles text[], principal jsonb)
    language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
    begin
      perform set_config('svc.gate_organization', coalesce(p_organization_id, ''), true);
      outcome := (select count(distinct t.organization_id)::text || ':' || count(*)::text from app_private.access_tokens t);
      organization_id := (select string_agg(distinct c.organization_id, ',') from app.api_clients c);
      return next;
    end $$`);
  const gate = await rt`select * from api.begin_request(${orgA}, ${'0'.repeat(64)})`.catch((e) => e);
  if (gate instanceof Error) {
    // On a cluster the other organizations' shards are refused, or reached only as svc_gate, which cannot log in.
    t.ok(refusedOutsideItsOrganization(gate) || /role "svc_gate" is not permitted to log in/.test(gate.message),
      `on a cluster the other organizations' shards stay shut: ${gate.message}`);
  } else {
    t.match(gate[0].outcome, /^1:[1-9]/, 'the gate reads tokens of one organization');
    t.equal(gate[0].organization_id, orgA, 'and clients of the organization it was asked about alone');
  }
});

t.test(`no function of ours belongs to a superuser (${where})`, async (t) => {
  const a = await startApp(t);
  // The cluster's administration and the control plane's commands included.
  const owned = await a.admin`select p.oid::regprocedure::text as fn
    from pg_proc p join pg_roles r on r.oid = p.proowner join pg_namespace n on n.oid = p.pronamespace
   where (r.rolsuper or r.rolbypassrls) and n.nspname in ('api', 'app', 'app_private', 'control', 'reporting', 'reporting_private', 'skills')
     and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
   order by 1`;
  t.same(owned.map((f) => f.fn), [], 'every function of ours belongs to a role under the policies');
});

t.test(`the schema belongs to svc_schema, and the migrations run as svc_deploy acting as it (${where})`, async (t) => {
  const a = await startApp(t);
  const cluster = CITUS_WORKERS.length > 0;
  const roles = await a.admin`select rolname, rolsuper, rolbypassrls, rolcanlogin, rolcreaterole, rolcreatedb, rolconfig
    from pg_roles where rolname in ('svc_schema', 'svc_deploy') order by 1`;
  t.same(roles, [
    { rolname: 'svc_deploy', rolsuper: false, rolbypassrls: false, rolcanlogin: true, rolcreaterole: false, rolcreatedb: false, rolconfig: ['role=svc_schema'] },
    // On a cluster Citus opens its connections to the workers as the statement's role: the owner
    // logs in there, node to node, without a password of its own.
    { rolname: 'svc_schema', rolsuper: false, rolbypassrls: false, rolcanlogin: cluster, rolcreaterole: false, rolcreatedb: false, rolconfig: null },
  ], 'the deploy login is neither a superuser nor bypasses row security, and every session of it is svc_schema\'s');
  const [password] = await a.admin`select rolpassword is null as none from pg_authid where rolname = 'svc_schema'`;
  t.ok(password!.none, 'svc_schema has no password');
  // Every object of ours on every node (a worker's own copies of the api views included): owned by
  // a role that neither is a superuser nor bypasses row security.
  const database = new URL(a.adminUrl).pathname.slice(1);
  for (const [i, url] of [a.adminUrl, ...CITUS_WORKERS.map((w) => editDatabaseUrl(w, { database }))].entries()) {
    const node = postgres(url, oneConnection);
    try {
      const ours = `n.nspname in ('api', 'app', 'app_private', 'control', 'reporting', 'skills', 'graphile_worker', 'reporting_private') or n.nspname ~ '^api_shard_'`;
      const above = await node.unsafe(`
        select kind || ' ' || name as object from (
          select 'schema' as kind, n.nspname::text as name, n.nspowner as owner from pg_namespace n where ${ours}
          union all
          select 'relation', c.oid::regclass::text, c.relowner from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where (${ours}) and c.relname !~ '^test_'
             and not exists (select from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
          union all
          select 'function', p.oid::regprocedure::text, p.proowner from pg_proc p join pg_namespace n on n.oid = p.pronamespace
           where (${ours}) and p.proname !~ '^test_'
             and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
          union all
          select 'relation', 'public.schema_migrations', c.relowner from pg_class c where c.oid = to_regclass('public.schema_migrations')
        ) o join pg_roles r on r.oid = o.owner
        where r.rolsuper or r.rolbypassrls order by 1`);
      t.same(above.map((o) => o.object), [], `${i ? `worker ${i}` : 'the coordinator or server'}: no schema, relation or function of ours belongs to a superuser or a role that bypasses row security`);
      if (cluster) {
        // The relay's dblink: its schema's owner could put a function of its own in dblink's place,
        // which the relay's connection would run with the privileges that read every password.
        const [dblink] = await node`select r.rolsuper as superuser, has_schema_privilege('svc_schema', n.oid, 'create') as creatable,
            has_schema_privilege('public', n.oid, 'usage') as public
          from pg_namespace n join pg_roles r on r.oid = n.nspowner where n.nspname = 'svc_dblink'`;
        t.same(dblink, { superuser: true, creatable: false, public: false }, `${i ? `worker ${i}` : 'the coordinator'}: dblink's schema is a superuser's, closed to the service and to PUBLIC`);
      }
      if (i > 0) {
        // What only a superuser may make there is the bootstrap's, and no role of the service may change or call it.
        const triggers = await node`select t.evtname, p.oid::regprocedure::text as fn, r.rolsuper as superuser,
            has_function_privilege('svc_schema', p.oid, 'execute') as callable
          from pg_event_trigger t join pg_proc p on p.oid = t.evtfoid join pg_roles r on r.oid = p.proowner
         where t.evtname like 'shard\_%' order by 1`;
        t.same(triggers, [
          { evtname: 'shard_privileges', fn: 'svc_bootstrap.shard_privileges()', superuser: true, callable: false },
          { evtname: 'shard_views_dropped', fn: 'svc_bootstrap.shard_views_stale()', superuser: true, callable: false },
          { evtname: 'shard_views_stale', fn: 'svc_bootstrap.shard_views_stale()', superuser: true, callable: false },
        ], `worker ${i}: the event triggers run the bootstrap's function, a superuser's`);
      }
    } finally {
      await node.end();
    }
  }
  const [tasks] = await a.admin`select pg_get_userbyid(relowner) as owner from pg_class where oid = 'app.tasks'::regclass`;
  t.equal(tasks!.owner, 'svc_schema', 'the tables belong to svc_schema');
  if (cluster) {
    const [prepare] = await a.admin`select has_function_privilege('svc_schema', 'svc_bootstrap.prepare_workers()', 'execute') as callable`;
    t.equal(prepare!.callable, false, 'the bootstrap\'s preparation of the workers is a superuser\'s alone');
    // Citus copies a reference table to a node that lacks it as a superuser, running its checks for
    // each row: a node's addition refuses checks that call anything but PostgreSQL's own immutable
    // functions, and the rebalance, which moves by block_writes alone, runs as svc_mover.
    const routines = await a.admin`select p.oid::regprocedure::text as fn, r.rolname::text as owner, r.rolsuper as superuser, p.prosecdef as definer,
        has_function_privilege('svc_schema', p.oid, 'execute') as deploy
      from pg_proc p join pg_roles r on r.oid = p.proowner
     where p.pronamespace = 'svc_bootstrap'::regnamespace and p.proname in ('rebalance_start', 'reference_tables_trusted') order by 1`;
    t.same(routines.map((r) => ({ ...r, owner: r.superuser ? 'a superuser' : r.owner, superuser: undefined })), [
      { fn: 'svc_bootstrap.rebalance_start(text)', owner: 'svc_mover', definer: true, deploy: true, superuser: undefined },
      { fn: 'svc_bootstrap.reference_tables_trusted()', owner: 'a superuser', definer: false, deploy: false, superuser: undefined },
    ], 'the rebalance\'s start runs as svc_mover, which the deploy login may call; the reference tables\' check is a superuser\'s');
    const deploy = postgres(editDatabaseUrl(a.adminUrl, { username: 'svc_deploy', password: process.env.SVC_DEPLOY_DB_PASSWORD ?? 'svc_deploy' }), oneConnection);
    t.teardown(() => deploy.end());
    t.match(await failure(deploy`select svc_bootstrap.rebalance_start('force_logical')`), /^22023 .*only block_writes/, 'a rebalance moves by block_writes alone');
    await a.admin`select svc_bootstrap.reference_tables_trusted()`;
    t.pass('the reference tables call only immutable functions built into PostgreSQL');
    for (const [what, check] of [
      ['a function of the service', 'app_private.normalize_email(code) is not null'],
      ['a superuser\'s function that runs what it is given', `pg_catalog.alter_role_if_exists('svc_deploy', 'select 1') or true`],
    ] as const) {
      await deploy.unsafe(`alter table app_private.currencies add constraint test_untrusted check (${check}) not valid`);
      t.match(await failure(a.admin.unsafe(`call svc_bootstrap.add_node('127.0.0.1', 1)`)), /^42501 .*app_private\.currencies, check test_untrusted calls/,
        `a node's addition refuses a reference table whose check calls ${what}`);
      await deploy.unsafe(`alter table app_private.currencies drop constraint test_untrusted`);
    }
  }
});

t.test(`the worker logs in as svc_worker: every organization's jobs, no credential, no power over the schema (${where})`, async (t) => {
  const a = await startApp(t);
  t.match(a.config.workerDatabaseUrl, /^postgres(ql)?:\/\/svc_worker:/, 'the worker\'s URL names svc_worker');
  const worker = postgres(a.config.workerDatabaseUrl, oneConnection);
  t.teardown(() => worker.end());
  const [role] = await a.admin`select rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin,
      pg_has_role('svc_worker', 'svc_operator', 'usage') as operator, pg_has_role('svc_worker', 'svc_runtime', 'member') as runtime,
      (select count(*)::int from pg_class where relowner = r.oid) + (select count(*)::int from pg_proc where proowner = r.oid)
        + (select count(*)::int from pg_namespace where nspowner = r.oid) as owns
    from pg_roles r where rolname = 'svc_worker'`;
  t.same(role, { rolsuper: false, rolbypassrls: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: true,
    operator: true, runtime: true, owns: 0 }, 'a login under the policies that owns nothing, an operator, able to act as svc_runtime');
  t.equal((await worker`select current_user as u`)[0]!.u, 'svc_worker', 'it logs in');

  const [orgA, orgB] = [await a.createOrg(), await a.createOrg()];
  const clientA = await a.createClient(orgA);
  await a.token(clientA);
  t.equal((await worker`select count(*)::int as n from app.organizations where id in (${orgA}, ${orgB})`)[0]!.n, 2,
    'it reads every organization (an operator session)');

  for (const [what, statement] of [
    ['a token digest', 'select token_sha256 from app_private.access_tokens'],
    ['a client secret', 'select * from app.client_secrets'],
    ['a signing key', 'select * from app_private.signing_keys'],
    ['a BI login', 'select * from app_private.bi_logins'],
    ['the client directory', 'select * from app_private.client_directory'],
    ['a table of its own', 'create table app.worker_scratch (id int)'],
    ['a change to a table', 'alter table app.tasks add column worker_scratch int'],
    ['a function replaced', 'create or replace function app.current_organization_id() returns text language sql as $$ select null::text $$'],
    ['a role', 'create role svc_worker_scratch'],
    ['a program run by the server', "copy (select 1) to program 'true'"],
    ['a control-plane command', "select control.org_set_status('org_none', 'suspended')"],
  ] as const) {
    t.match(await failure(worker.unsafe(statement)), /^42501 /, `it may not touch ${what}`);
  }

  // Token records: the purge sees the expiry of those that have run out, and deletes them alone.
  const [live] = await a.admin`select count(*)::int as n from app_private.access_tokens where organization_id = ${orgA}`;
  t.ok(live!.n >= 1, 'the client holds a live token record');
  t.equal((await worker`select count(*)::int as n from app_private.access_tokens where organization_id = ${orgA}`)[0]!.n, 0,
    'the worker sees no token record that is still live');
  await a.admin`update app_private.access_tokens set expires_at = now() - interval '2 minutes' where organization_id = ${orgA}`;
  t.equal((await worker`select control.purge_expired_access_tokens() as n`)[0]!.n, live!.n, 'the purge deletes the ones that ran out');
  t.equal((await a.admin`select count(*)::int as n from app_private.access_tokens where organization_id = ${orgA}`)[0]!.n, 0, 'and they are gone');
});

t.test(`svc-admin runs its commands as svc_admin: every organization's control plane, no digest, no power over the schema (${where})`, async (t) => {
  const a = await startApp(t);
  const [role] = await a.admin`select rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin,
      pg_has_role('svc_admin', 'svc_operator', 'usage') as operator,
      (select count(*)::int from pg_class where relowner = r.oid) + (select count(*)::int from pg_proc where proowner = r.oid)
        + (select count(*)::int from pg_namespace where nspowner = r.oid) as owns
    from pg_roles r where rolname = 'svc_admin'`;
  t.same(role, { rolsuper: false, rolbypassrls: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: true, operator: true, owns: 0 },
    'a login under the policies that owns nothing, an operator');

  // The commands connect as svc_admin: named by ADMIN_DATABASE_URL, a role that does not exist refuses them.
  const org = await a.createOrg();
  const saved = process.env.ADMIN_DATABASE_URL;
  process.env.ADMIN_DATABASE_URL = editDatabaseUrl(a.adminUrl, { username: 'svc_admin_nobody', password: 'x' });
  try {
    const refused = await svcAdmin(['org', 'set-status', '--org', org, '--status', 'suspended'], a.adminUrl);
    t.equal(refused.code, 1, 'a command runs on svc-admin\'s own login, not the owner connection');
    t.match(JSON.stringify(refused.err), /svc_admin_nobody/, 'which the database names in its refusal');
    t.equal((await svcAdmin(['reporting', 'grant', '--org', org, '--roles', 'manager'], a.adminUrl)).code, 1,
      'and so does a BI login\'s: no command runs on a superuser\'s connection');
  } finally {
    if (saved === undefined) delete process.env.ADMIN_DATABASE_URL;
    else process.env.ADMIN_DATABASE_URL = saved;
  }

  const adminSql = postgres(adminUrlFrom(a.adminUrl), oneConnection);
  t.teardown(() => adminSql.end());
  t.equal((await adminSql`select current_user as u`)[0]!.u, 'svc_admin', 'it logs in');
  const client = await a.createClient(org);
  await a.token(client);
  t.equal((await adminSql`select count(*)::int as n from app.client_secrets where client_id = ${client.id} and revoked_at is null`)[0]!.n, 1,
    'it reads a client\'s secrets, but for their digests');
  for (const [what, statement] of [
    ['a secret\'s digest', 'select secret_sha256 from app.client_secrets'],
    ['a token digest', 'select token_sha256 from app_private.access_tokens'],
    ['a BI login', 'select * from app_private.bi_logins'],
    ['a job\'s purge', 'select control.purge_expired_access_tokens()'],
    ['a table of its own', 'create table app.admin_scratch (id int)'],
    ['a change to a table', 'alter table app.tasks add column admin_scratch int'],
    ['a role', 'create role svc_admin_scratch'],
    ['a program run by the server', "copy (select 1) to program 'true'"],
  ] as const) {
    t.match(await failure(adminSql.unsafe(statement)), /^42501 /, `it may not touch ${what}`);
  }
  // A BI login, made and dropped through the control plane's two commands, which call the
  // bootstrap's functions (CREATE ROLE); those make and drop nothing but a BI login.
  const [bi] = await adminSql`select * from control.reporting_grant(${org}, '{manager}', ${scramVerifier(randomBytes(16).toString('hex'))})`;
  t.match(bi!.role_name, /^svc_bi_[0-9a-f]{12}$/, 'svc_admin makes a BI login through control.reporting_grant');
  const [made] = await a.admin`select pg_has_role(${bi!.role_name}, 'svc_reporting', 'member') as reporting,
      (select rolcanlogin from pg_roles where rolname = ${bi!.role_name}) as login`;
  t.same(made, { reporting: true, login: true }, 'a login, a member of svc_reporting');
  await adminSql`select control.reporting_revoke(${bi!.role_name})`;
  t.equal((await a.admin`select count(*)::int as n from pg_roles where rolname = ${bi!.role_name}`)[0]!.n, 0,
    'and drops it through control.reporting_revoke');
  for (const [what, statement] of [
    ['a login of another name', `select svc_bootstrap.bi_login_create('svc_runtime_2', '${scramVerifier('x')}')`],
    ['a password as text', `select svc_bootstrap.bi_login_create('svc_bi_${'0'.repeat(12)}', 'secret')`],
    ['to drop a login of the service', `select svc_bootstrap.bi_login_drop('svc_runtime')`],
  ] as const) {
    t.match(await failure(adminSql.unsafe(statement)), /^22023 /, `the BI logins' functions refuse ${what}`);
  }
  const [owner] = await a.admin`select r.rolcanlogin as login, r.rolcreaterole as createrole, r.rolsuper or r.rolbypassrls as above,
      (select count(*)::int from pg_auth_members m where m.roleid = r.oid) as members,
      (select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_proc p where p.proowner = r.oid) as owns
    from pg_roles r where r.rolname = 'svc_bi_logins'`;
  t.same(owner, { login: false, createrole: true, above: false, members: 0,
    owns: ['svc_bootstrap.bi_login_create(text,text)', 'svc_bootstrap.bi_login_drop(text)'] },
  'the BI logins\' functions belong to svc_bi_logins, which never logs in, has no member and owns nothing else');
});

t.test(`svc_mover, which moves and restores rows under no policy, has no privilege the schema's owner lacks (${where})`, async (t) => {
  const a = await startApp(t);
  const cluster = CITUS_WORKERS.length > 0;
  const [mover] = await a.admin`select r.rolsuper as superuser, r.rolbypassrls as bypassrls, r.rolcanlogin as login,
      r.rolcreaterole or r.rolcreatedb as creates, a.rolpassword is null as no_password,
      (select count(*)::int from pg_auth_members m where m.roleid = r.oid) as members,
      (select array_agg(m.roleid::regrole::text) from pg_auth_members m where m.member = r.oid) as member_of,
      (select array_agg(p.oid::regprocedure::text) from pg_proc p where p.proowner = r.oid) as owns,
      (select count(*)::int from pg_class c where c.relowner = r.oid) + (select count(*)::int from pg_namespace n where n.nspowner = r.oid) as owns_else
    from pg_roles r join pg_authid a on a.oid = r.oid where r.rolname = 'svc_mover'`;
  // It bypasses row security (a shard move copies rows, a restore writes them); as a member of the
  // tables' owner, which could lift their row security itself, it gains nothing by it.
  t.same(mover, { superuser: false, bypassrls: true, login: cluster, creates: false, no_password: true, members: 0,
    member_of: ['svc_schema'], owns: cluster ? ['svc_bootstrap.rebalance_start(text)'] : null, owns_else: 0 },
  'a member of svc_schema alone, with no member, no password, and on a cluster the rebalance\'s start alone');
  const [reach] = await a.admin`select bool_or(pg_has_role(r.rolname, 'svc_mover', 'member')) as any from pg_roles r
    where r.rolname in ('svc_runtime', 'svc_worker', 'svc_admin', 'svc_deploy', 'svc_schema', 'svc_reporting')`;
  t.equal(reach!.any, false, 'no login of the service may act as it');
});

t.test(`a capability link's beginning reads only the organization its signature names (${where})`, async (t) => {
  const a = await startApp(t);
  const orgs: string[] = [];
  const links: string[] = [];
  for (const name of ['A', 'B']) {
    const p = await a.principal('member,manager');
    const project = (await a.request({ method: 'POST', url: '/v1/projects', token: p.token, headers: { 'idempotency-key': `p${name}` },
      payload: { code: name, name } })).json.id;
    const upload = await a.request({ method: 'POST', url: '/v1/files/uploads', token: p.token, headers: { 'idempotency-key': `u${name}` },
      payload: { name: 'n.txt', content_type: 'text/plain', size_bytes: 1, sha256: '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881',
        linked_resource: { type: 'project', id: project } } });
    t.equal(upload.statusCode, 201, `an upload in organization ${name}`);
    orgs.push(p.orgId);
    links.push(upload.json.upload_url);
  }
  const [owners] = await a.admin`select array_agg(distinct pg_get_userbyid(proowner)) as o from pg_proc
    where oid in ('api.file_upload_begin(text)'::regprocedure, 'api.file_download_begin(text)'::regprocedure, 'api.report_download_begin(text)'::regprocedure)`;
  t.same(owners!.o, ['svc_gate'], 'the three beginnings belong to svc_gate');
  // As the gate, scoped to A the way a beginning is once A's link holds: none of B's rows, whatever the WHERE.
  const seen = await a.admin.begin(async (tx) => {
    await tx`set local role svc_gate`;
    await tx`select set_config('svc.gate_organization', ${orgs[0]!}, true)`;
    return Promise.all(['app.file_uploads', 'app.files', 'app.report_runs'].map(async (table) =>
      (await tx.unsafe(`select distinct organization_id from ${table}`)).map((r) => r.organization_id)));
  }).catch((e) => e);
  if (seen instanceof Error) {
    // On a cluster: refused, or reached only as svc_gate, which cannot log in.
    t.ok(refusedOutsideItsOrganization(seen) || /role "svc_gate" is not permitted to log in/.test(seen.message),
      `on a cluster the other organizations' shards stay shut: ${seen.message}`);
  } else {
    t.same(seen[0], [orgs[0]], 'uploads: the organization named alone');
    t.same(seen[1], [], 'files: none of another organization');
    t.same(seen[2], [], 'report runs: none of another organization');
  }
  // The link itself still opens its upload (through the API, on whichever node holds it).
  const put = await a.request({ method: 'PUT', url: new URL(links[1]!).pathname, payload: Buffer.from('x'),
    headers: { 'content-type': 'text/plain' } });
  t.equal(put.statusCode, 200, 'organization B\'s upload link opens its upload');
});

t.test(`the worker and svc-admin keep up with svc_owner: every table it may use and every policy of its (${where})`, async (t) => {
  const a = await startApp(t);
  const [gaps] = await a.admin`select
      (select array_agg(c.oid::regclass::text order by 1) from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p')
          and has_table_privilege('svc_owner', c.oid, 'select')
          and not (has_table_privilege('svc_worker', c.oid, 'select') and has_table_privilege('svc_admin', c.oid, 'select'))) as tables,
      (select array_agg(p.polrelid::regclass::text order by 1) from pg_policy p
        where p.polname = 'Commands act in the request''s organization'
          and not p.polroles @> array['svc_owner'::regrole, 'svc_worker'::regrole, 'svc_admin'::regrole]::oid[]) as policies`;
  t.same(gaps, { tables: null, policies: null }, 'a table svc_owner reads is granted to both, and its policy names both');
});

t.test(`nothing pg_stat_activity shows a runtime or BI session, on any node, opens a request (${where})`, async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const client = await a.createClient(org);
  const database = new URL(a.adminUrl).pathname.slice(1);
  const password = new URL(a.runtimeUrl).password;
  const biPassword = randomBytes(16).toString('hex');
  const [grant] = await a.admin`select * from control.reporting_grant(${org}, '{manager}', ${scramVerifier(biPassword)})`;
  t.teardown(() => a.admin`select control.reporting_revoke(${grant!.role_name})`.catch(() => {}));
  const nodes = [a.adminUrl, ...CITUS_WORKERS.map((w) => editDatabaseUrl(w, { database }))];
  const as = (node: string, username: string, pw: string) => editDatabaseUrl(node, { username, password: pw });
  // Every credential of the organization's client: its secret, each token and each token's SHA-256.
  const credentials = new Set<string>([client.secret]);
  const token = async () => {
    const token = await a.token(client);
    credentials.add(token).add(tokenSha256(token));
    return token;
  };

  // A token granted on a session that then waits idle, and a request's token check held open on
  // another (its transaction waits, as a slow request's does), each on a new session (a worker
  // sets a role's tracking when a session starts), beside a load of token grants and requests:
  // what the nodes show of them is what a session sees.
  const held = async () => {
    const granted = postgres(a.runtimeUrl, oneConnection);
    const requesting = postgres(a.runtimeUrl, oneConnection);
    const bearer = randomBytes(24).toString('base64url');
    credentials.add(bearer).add(tokenSha256(bearer));
    const [recorded] = await granted`select api.access_token_record(${org}, ${client.id}, ${client.secret},
      sha256(convert_to(${bearer}, 'UTF8')), now() + interval '1 hour') as ok`;
    t.ok(recorded!.ok, 'a token recorded');
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => { release = resolve; });
    const begun = new Promise<void>((resolve, reject) => {
      requesting.begin(async (tx) => {
        const [r] = await tx`select outcome from api.begin_request(${org}, ${tokenSha256(bearer)}, null)`;
        t.equal(r!.outcome, 'ok', 'a request holds its context');
        resolve();
        await waiting;
      }).catch(reject);
    });
    await begun;
    return async () => { release(); await Promise.all([granted.end(), requesting.end()]); };
  };
  let project: string | undefined;
  const harvest = async () => {
    const seen: { node: string; text: string }[] = [];
    // A BI login exists on the coordinator alone (its reads reach the workers through the relay).
    const watchers = nodes.flatMap((node, i) => [as(node, 'svc_runtime', password), ...(i === 0 ? [as(node, grant!.role_name, biPassword)] : [])]
      .map((url) => ({ node, sql: postgres(url, oneConnection) })));
    let loading = true;
    const load = (async () => {
      project ??= (await a.request({ method: 'POST', url: '/v1/projects', token: await token(),
        headers: { 'idempotency-key': randomBytes(12).toString('hex') }, payload: { code: 'HARV', name: 'Harvest' } })).json.id as string;
      for (let n = 0; loading; n++) {
        const bearer = await token();
        t.equal((await a.request({ url: '/v1/me', token: bearer })).statusCode, 200);
        t.equal((await a.request({ url: '/v1/tasks?limit=5', token: bearer })).statusCode, 200);
        // A write: a command in a transaction, its idempotency record, its event.
        const created = await a.request({ method: 'POST', url: '/v1/tasks', token: bearer,
          headers: { 'idempotency-key': randomBytes(12).toString('hex') }, payload: { project_id: project, name: `Task ${n}` } });
        t.equal(created.statusCode, 201, created.body);
      }
    })();
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      for (const w of watchers) {
        for (const r of await w.sql`select distinct query from pg_stat_activity where pid <> pg_backend_pid() and query <> ''`) {
          if (!seen.some((s) => s.node === w.node && s.text === r.query)) seen.push({ node: w.node, text: r.query as string });
        }
      }
    }
    loading = false;
    await load;
    await Promise.all(watchers.map((w) => w.sql.end()));
    return seen;
  };
  // Each text replayed as the runtime role on the node that showed it: a request opened by it
  // leaves a signed context in that session.
  const control = /^\s*(begin|start\s+transaction|commit|end|rollback|abort|prepare\s+transaction|savepoint|release|copy)\b/i;
  const opening = async (seen: { node: string; text: string }[]) => {
    const found: string[] = seen.filter((s) => [...credentials].some((c) => s.text.includes(c))).map((s) => s.text);
    for (const { node, text } of seen) {
      if (control.test(text)) continue;
      const sql = postgres(as(node, 'svc_runtime', password), oneConnection);
      const mac = await sql.begin(async (tx) => {
        await tx.savepoint((sp) => sp.unsafe(text)).catch(() => {});
        return (await tx`select coalesce(current_setting('svc.context_mac', true), '') as mac`)[0]!.mac as string;
      }).catch(() => '');
      await sql.end();
      if (mac !== '') found.push(text);
    }
    return found;
  };

  for (const node of nodes.slice(1)) {
    const bi = postgres(as(node, grant!.role_name, biPassword), oneConnection);
    t.match(await failure(bi`select 1`), /^28000 /, 'a BI login cannot log in on a worker: it exists on the coordinator alone');
    await bi.end();
  }
  const release = await held();
  const seen = await harvest();
  await release();
  t.ok(seen.length > 0, `${seen.length} statement texts seen on ${nodes.length} node(s)`);
  t.same(await opening(seen), [], 'none holds a credential, and none replayed opens a request');

  if (CITUS_WORKERS.length) {
    // The harvest finds what it looks for: with the runtime role's statements tracked on the
    // workers, as PostgreSQL does by default, a client's secret and a held request's token check
    // are there in their delegated calls' text.
    const workers = CITUS_WORKERS.map((w) => postgres(editDatabaseUrl(w, { database }), oneConnection));
    const track = (on: boolean) => Promise.all(workers.map((w) => w.begin(async (tx) => {
      await tx`set local citus.enable_ddl_propagation = off`;
      await tx.unsafe(`alter role svc_runtime ${on ? 'reset track_activities' : 'set track_activities = off'}`);
    })));
    await track(true);
    try {
      const release = await held();
      const seen = await harvest();
      await release();
      const found = await opening(seen);
      t.ok(found.some((text) => text.includes(client.secret)), 'tracked, a client\'s secret is in sight');
      t.ok(found.some((text) => /begin_request/.test(text)), 'and a token check that opens the request again');
    } finally {
      await track(false);
      await Promise.all(workers.map((w) => w.end()));
    }
  }
});
