// Tenancy inside the database, without HTTP: what the svc_runtime role can and cannot see or do,
// the request context set by api.begin_request, catalogue guards (forced RLS, no PUBLIC execute,
// pinned search_path) and the licence rules enforced in SQL.
import t from 'tap';
import type { Test } from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS, type TestApp } from '../helpers/app.ts';
import { beginRequest, inRequest, tokenSha256 } from '../helpers/sql.ts';
import { constraintNamed } from '../../src/http/errors.ts';

const opts = { max: 1, onnotice: () => {} } as const;

/** Runs a query and returns its SQLSTATE, or undefined when it succeeded. */
async function sqlstate(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e: any) {
    return e?.code ?? String(e);
  }
}

type Tagged = (strings: TemplateStringsArray, ...values: any[]) => Promise<any[]>;
const text = (q: string) => Object.assign([q], { raw: [q] }) as unknown as TemplateStringsArray;

/** Rows of an api view the runtime role sees in a transaction of its own, read where a request of
 * the organization reads (on a cluster, in its worker: inRequest), after `setup` (a begin_request, or nothing). */
async function visible(t: Test, a: TestApp, rt: postgres.Sql, org: string, query: string,
  setup: (tx: postgres.TransactionSql) => Promise<unknown> = async () => undefined): Promise<any[]> {
  return rt.begin(async (tx) => {
    await setup(tx);
    return (await inRequest(t, a.runtimeUrl, tx as never, org) as Tagged)(text(query));
  });
}

async function seed(t: Test, a: TestApp) {
  const orgA = await a.createOrg({ name: 'Org A' });
  const orgB = await a.createOrg({ name: 'Org B' });
  await a.addMember(orgA, 'a1@a.test');
  await a.addMember(orgA, 'a2@a.test');
  await a.addMember(orgB, 'b1@b.test');
  const clientA = await a.createClient(orgA);
  const clientB = await a.createClient(orgB);
  // An idempotency key row, so that table has data too.
  await a.admin`insert into app.idempotency_keys (organization_id, client_id, method, route, key, fingerprint)
    values (${orgA}, ${clientA.id}, 'POST', '/v1/x', 'k1', 'f')`;
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  return { orgA, orgB, clientA, clientB, rt };
}

t.test('svc_runtime without request context sees nothing', async (t) => {
  const a = await startApp(t);
  const { rt, orgA } = await seed(t, a);
  const [who] = await rt`select current_user as u`;
  t.equal(who!.u, 'svc_runtime', 'connected as svc_runtime');
  for (const [rel, table] of [['api.members', 'app.members'], ['api.organization', 'app.organizations']] as const) {
    const [own] = await a.admin.unsafe(`select count(*)::int as n from ${table}`);
    t.ok(own!.n > 0, `${table} has data (the owner sees ${own!.n})`);
    const [r] = await visible(t, a, rt, orgA, `select count(*)::int as n from ${rel}`);
    t.equal(r!.n, 0, `${rel}: 0 rows without context`);
    if (CITUS_WORKERS.length) {
      // On the coordinator Citus reads the view's shards as the runtime role, which reads no table.
      t.equal(await sqlstate(rt.unsafe(`select count(*)::int as n from ${rel}`)), '42501', `${rel} on the coordinator: permission denied`);
    }
  }
  // Base tables are out of the runtime role's reach altogether: it uses the api surface only.
  for (const rel of ['app.organizations', 'app.members', 'app.api_clients', 'app.client_secrets', 'app.idempotency_keys',
    'app_private.signing_keys', 'app_private.rate_limit_buckets', 'app_private.access_tokens', 'app_private.context_keys']) {
    t.equal(await sqlstate(rt.unsafe(`select * from ${rel}`)), '42501', `${rel}: permission denied`);
  }
});

t.test('svc_runtime cannot bypass row-level security', async (t) => {
  const a = await startApp(t);
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const [r] = await rt`select rolbypassrls, rolsuper, rolcreaterole, rolcreatedb from pg_roles where rolname = 'svc_runtime'`;
  t.equal(r!.rolbypassrls, false, 'no BYPASSRLS');
  t.equal(r!.rolsuper, false, 'not superuser');
  t.equal(r!.rolcreaterole, false);
  t.equal(r!.rolcreatedb, false);
  t.ok(await sqlstate(rt`set role postgres`), 'set role postgres fails');
  t.equal(await sqlstate(rt`set role postgres`), '42501');
  t.ok(await sqlstate(rt`set session authorization postgres`), 'set session authorization fails');
  // With row_security off, a query that RLS would filter must error rather than bypass.
  const [cnt] = await rt.begin(async (tx) => {
    const st = await sqlstate(tx`set local row_security = off`);
    if (st) return [{ n: -1 }];
    try {
      return await tx`select count(*)::int as n from app.organizations`;
    } catch (e: any) {
      return [{ n: e.code }];
    }
  }).catch((e) => [{ n: e.code }]);
  t.not(cnt!.n, 1, 'row_security=off never reveals rows');
  t.notOk(typeof cnt!.n === 'number' && cnt!.n > 0, 'no rows with row_security=off');
});

t.test('request context from api.begin_request', async (t) => {
  const a = await startApp(t);
  const { orgA, clientA, clientB, rt } = await seed(t, a);

  const inside = await rt.begin(async (tx) => {
    const b = await beginRequest(tx, clientA);
    const q = await inRequest(t, a.runtimeUrl, tx as never, orgA) as Tagged;
    const members = await q`select organization_id, id from api.members order by id`;
    const orgs = await q`select id from api.organization`;
    return { b, members, orgs };
  });
  const raw = await sqlstate(rt.begin(async (tx) => {
    await beginRequest(tx, clientA);
    const q = await inRequest(t, a.runtimeUrl, tx as never, orgA) as Tagged;
    return q`select organization_id, id from app.members where organization_id = ${orgA}`;
  }));
  t.equal(inside.b!.outcome, 'ok');
  t.equal(inside.b!.organization_id, orgA);
  t.same(inside.members.map((m) => m.id), ['a1@a.test', 'a2@a.test'], 'api.members shows only org A');
  t.ok(inside.members.every((m) => m.organization_id === orgA));
  t.same(inside.orgs.map((o) => o.id), [orgA], 'api.organization shows only org A');
  t.equal(raw, '42501', 'base tables stay out of reach with a context too');

  const after = await visible(t, a, rt, orgA, 'select count(*)::int as n from api.members');
  t.equal(after[0]!.n, 0, 'context is gone after the transaction');
  const [ctx] = await visible(t, a, rt, orgA, 'select app.current_organization_id() as org, app.current_client_id() as client');
  t.equal(ctx!.org, null);
  t.equal(ctx!.client, null);

  // Org B's client in a new transaction on the same connection sees only org B.
  const bMembers = await visible(t, a, rt, clientB.orgId, 'select id from api.members order by id', (tx) => beginRequest(tx, clientB));
  t.same(bMembers.map((m) => m.id), ['b1@b.test']);

  // A failing check sets no context.
  const denied = await rt.begin(async (tx) => {
    const [b] = await tx`select * from api.begin_request(${clientA.orgId}, ${tokenSha256('a-token-never-issued')}, null)`;
    const n = await (await inRequest(t, a.runtimeUrl, tx as never, clientA.orgId) as Tagged)`select count(*)::int as n from api.members`;
    return { outcome: b!.outcome, n: n[0]!.n };
  });
  t.equal(denied.outcome, 'invalid_token');
  t.equal(denied.n, 0, 'no context after a failed begin_request');
  const noRole = await rt.begin(async (tx) => {
    await a.cli('client', 'set-roles', '--client', clientB.id, '--roles', 'finance');
    const b = await beginRequest(tx, clientB, ['manager']);
    const n = await (await inRequest(t, a.runtimeUrl, tx as never, clientB.orgId) as Tagged)`select count(*)::int as n from api.members`;
    return { outcome: b!.outcome, n: n[0]!.n };
  });
  t.equal(noRole.outcome, 'role_required');
  t.equal(noRole.n, 0, 'no context after role_required');
});

t.test('svc_runtime cannot write tenant tables or call the control plane', async (t) => {
  const a = await startApp(t);
  const { orgA, clientA, rt } = await seed(t, a);
  const within = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) => rt.begin(async (tx) => {
    await beginRequest(tx, clientA);
    return fn(tx);
  });
  for (const ctx of [false, true]) {
    const run = (q: (s: postgres.Sql | postgres.TransactionSql) => Promise<unknown>) =>
      sqlstate(ctx ? within((tx) => q(tx)) : q(rt));
    const label = ctx ? 'with context' : 'without context';
    t.equal(await run((s) => s`insert into app.members (organization_id, id, display_name) values (${orgA}, 'x@a.test', 'X')`),
      '42501', `insert app.members ${label}`);
    t.equal(await run((s) => s`update app.members set display_name = 'X'`), '42501', `update app.members ${label}`);
    t.equal(await run((s) => s`delete from app.members`), '42501', `delete app.members ${label}`);
    t.equal(await run((s) => s`insert into app.organizations (name, plan, timezone, currency, locale, web_url)
      values ('X', 'business', 'UTC', 'EUR', 'en', 'https://x')`), '42501', `insert app.organizations ${label}`);
    t.equal(await run((s) => s`update app.organizations set plan = 'enterprise'`), '42501', `update app.organizations ${label}`);
    t.equal(await run((s) => s`delete from app.organizations`), '42501', `delete app.organizations ${label}`);
    t.equal(await run((s) => s`insert into app.api_clients (organization_id, name, license_level, license_source, svc_roles)
      values (${orgA}, 'X', 'manager', 'purchased', '{hr}')`), '42501', `insert app.api_clients ${label}`);
    t.equal(await run((s) => s`update app.api_clients set svc_roles = '{member,manager,finance,hr}'`), '42501',
      `update app.api_clients ${label}`);
    t.equal(await run((s) => s`delete from app.api_clients`), '42501', `delete app.api_clients ${label}`);
    t.equal(await run((s) => s`update app.client_secrets set revoked_at = null`), '42501', `update app.client_secrets ${label}`);
    t.equal(await run((s) => s`select * from control.client_create(${orgA}, 'evil', 'manager', '{hr}'::text[])`), '42501',
      `control.client_create ${label}`);
    t.equal(await run((s) => s`select control.client_set_roles(${clientA.id}, '{member,manager,finance,hr}'::text[])`), '42501',
      `control.client_set_roles ${label}`);
    t.equal(await run((s) => s`select control.org_set_plan(${orgA}, 'enterprise')`), '42501', `control.org_set_plan ${label}`);
    t.equal(await run((s) => s`select control.purge_expired_idempotency_keys()`), '42501',
      `control.purge_expired_idempotency_keys ${label}`);
    t.equal(await run((s) => s`select app_private.random_secret('x')`), '42501', `app_private.random_secret ${label}`);
  }
  const [n] = await a.admin`select count(*)::int as n from app.members where organization_id = ${orgA}`;
  t.equal(n!.n, 2, 'nothing changed');
  const [c] = await a.admin`select svc_roles from app.api_clients where id = ${clientA.id}`;
  t.same(c!.svc_roles, ['member', 'manager', 'finance', 'hr']);
});

t.test('catalogue guards', async (t) => {
  const a = await startApp(t);
  const tables = await a.admin`
    select c.relname, c.relrowsecurity, c.relforcerowsecurity,
           exists (select from pg_attribute at where at.attrelid = c.oid and at.attname = 'organization_id'
                     and not at.attisdropped) as has_org
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'app' and c.relkind in ('r', 'p')
     order by c.relname`;
  t.ok(tables.length >= 5, `app has tables (${tables.map((r) => r.relname).join(', ')})`);
  for (const r of tables) {
    t.equal(r.relrowsecurity, true, `app.${r.relname}: row security enabled`);
    t.equal(r.relforcerowsecurity, true, `app.${r.relname}: row security forced`);
    t.ok(r.has_org || r.relname === 'organizations', `app.${r.relname}: has organization_id`);
  }

  const fns = await a.admin`
    select n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) as args, p.proacl::text[] as acl,
           p.prosecdef, p.proconfig
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('api', 'app', 'app_private', 'control')
     order by 1, 2`;
  t.ok(fns.length >= 20, `${fns.length} functions checked`);
  const publicExec = fns.filter((f) => f.acl === null || (f.acl as string[]).some((e) => e.startsWith('=')))
    .map((f) => `${f.nspname}.${f.proname}(${f.args}) acl=${JSON.stringify(f.acl)}`);
  t.same(publicExec, [], 'no function is executable by PUBLIC (and none has default, NULL privileges)');
  const unpinned = fns.filter((f) => f.prosecdef && !((f.proconfig ?? []) as string[]).some((c) => c.startsWith('search_path=')))
    .map((f) => `${f.nspname}.${f.proname}(${f.args})`);
  t.same(unpinned, [], 'every security definer function pins search_path');
  t.ok(fns.some((f) => f.prosecdef), 'there are security definer functions to check');

  // The runtime role really cannot execute what was not granted.
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const [h] = await rt`select has_function_privilege('svc_runtime', 'app_private.random_secret(text)', 'execute') as x,
    has_schema_privilege('svc_runtime', 'control', 'usage') as ctl`;
  t.equal(h!.x, false, 'svc_runtime cannot execute app_private.random_secret');
  t.equal(h!.ctl, false, 'svc_runtime has no usage on control');
});

t.test('licence rules in SQL', async (t) => {
  const a = await startApp(t);
  const trial = await a.createOrg({ plan: 'trial' });
  const team = await a.createOrg({ plan: 'team' });
  for (const org of [trial, team]) {
    const st = await sqlstate(a.admin`insert into app.api_clients (organization_id, name, license_level, license_source, svc_roles)
      values (${org}, 'c', 'manager', 'included', '{member}')`);
    t.equal(st, 'SVL01', 'a trial or team organization cannot have API clients');
  }
  await t.rejects(a.cli('client', 'create', '--org', trial, '--name', 'x', '--license', 'manager', '--roles', 'member'),
    'svc-admin client create fails for a trial org');

  const org = await a.createOrg();
  const c = await a.createClient(org);
  const insertSecret = (slot: number, digest: string) => sqlstate(a.admin`
    insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
    values (${org}, ${c.id}, ${slot}, sha256(convert_to(${digest}, 'UTF8')))`);
  t.equal(await insertSecret(1, 'another-1'), '23505', 'slot 1 is taken while active');
  const rotated = await a.cli('client', 'rotate-secret', '--client', c.id);
  t.type(rotated.secret_id, 'string', 'second secret in slot 2');
  t.equal(await insertSecret(1, 'third-1'), '23505', 'no third active secret (slot 1)');
  t.equal(await insertSecret(2, 'third-2'), '23505', 'no third active secret (slot 2)');
  t.equal(await insertSecret(3, 'third-3'), '23514', 'slot 3 does not exist');
  try {
    await a.admin`insert into app.client_secrets (organization_id, client_id, slot, secret_sha256)
      values (${org}, ${c.id}, 1, sha256('x'::bytea))`;
    t.fail('expected a unique violation');
  } catch (e: any) {
    t.equal(constraintNamed(e), 'client_secrets_two_active', 'the unique index client_secrets_two_active');
  }
  await t.rejects(a.cli('client', 'rotate-secret', '--client', c.id), 'rotating with two active secrets fails');
  const [n] = await a.admin`select count(*)::int as n from app.client_secrets where client_id = ${c.id} and revoked_at is null`;
  t.equal(n!.n, 2, 'exactly two active secrets');

  // After revoking one, its slot can be reused.
  await a.cli('client', 'revoke-secret', '--client', c.id, '--secret-id', c.secretId);
  t.equal(await insertSecret(1, 'reuse-1'), undefined, 'a revoked slot can be filled again');
});
