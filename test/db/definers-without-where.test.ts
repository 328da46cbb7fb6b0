// Every owner of a function that svc_runtime may execute, running SQL with no WHERE at all under one
// organization's signed context, reads and changes no row of another organization in any table it
// has a privilege on. This stands in for every command's body: whatever a command's WHERE says (or
// forgets), it runs as one of these owners, under these policies.
//
// Each table of the service gets a row of a second organization and one of the request's (written
// as a superuser with the table's checks and triggers off, in this test's own database), and a
// function owned by each role runs the statements it is handed. Triggers stay off while the
// statements run, so what decides each row is the policy alone. On one server: the policies and
// the functions have one text on both targets (test/db/one-schema.test.ts), and on a cluster a
// function of these owners that reached another organization's shard would be refused by Citus
// before its policy is asked (least-privilege.test.ts shows both).
import t from 'tap';
import postgres from 'postgres';
import { startApp, oneServer } from '../helpers/app.ts';
import { beginRequest, oneConnection } from '../helpers/sql.ts';

/** The roles that own a function svc_runtime may execute, each under its policies. svc_status is
 * not here: it counts every organization's waiting work by design, through its timing columns
 * alone (least-privilege.test.ts, "the service status"). */
const OWNERS = ['svc_api', 'svc_owner', 'svc_gate', 'svc_directory'];
/** Tables of the service that name no organization: catalogues every organization shares, and
 * service-wide keys and counters. */
const SERVICE_WIDE = ['app_private.agent_definitions', 'app_private.agent_skills', 'app_private.context_keys', 'app_private.currencies',
  'app_private.event_types', 'app_private.rate_limit_buckets', 'app_private.report_definitions', 'app_private.run_wake_key',
  'app_private.signing_keys'];

t.test('a definer\'s statements with no WHERE stay in the request\'s organization, for every owner and table',
  oneServer('triggers and checks switched off in the test database; the policies are the same text on a cluster'), async (t) => {
    const a = await startApp(t);
    const [orgOther, orgOwn] = [await a.createOrg(), await a.createOrg()];
    const client = await a.createClient(orgOwn);
    await a.createClient(orgOther);

    const tables = await a.admin<{ name: string; key: string | null }[]>`
      select c.oid::regclass::text as name,
             case when c.oid = 'app.organizations'::regclass then 'id'
                  when exists (select from pg_attribute x where x.attrelid = c.oid and x.attname = 'organization_id' and not x.attisdropped)
                  then 'organization_id' end as key
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p') and not c.relispartition
       order by 1`;
    t.same(tables.filter((r) => !r.key).map((r) => r.name), SERVICE_WIDE, 'every other table of app and app_private names its organization');
    const tenant = tables.filter((r) => r.key).map((r) => ({ name: r.name, key: r.key! }));
    t.ok(tenant.length > 40, `${tenant.length} tables name an organization`);

    // One row of each organization in every table: every check and NOT NULL but the key's dropped,
    // every trigger off (foreign keys' included), the key's columns given a value of their type.
    for (const { name } of tenant) {
      await a.admin.unsafe(`alter table ${name} disable trigger all`);
      await a.admin.unsafe(`do $$ declare r record; begin
        for r in select conname from pg_constraint where conrelid = '${name}'::regclass and contype in ('c', 'x') loop
          execute format('alter table ${name} drop constraint %I', r.conname);
        end loop;
        for r in select attname from pg_attribute a where attrelid = '${name}'::regclass and attnum > 0 and not attisdropped and attnotnull
                   and attidentity = '' and attgenerated = ''
                   and not exists (select from pg_constraint k where k.conrelid = a.attrelid and k.contype = 'p' and a.attnum = any(k.conkey)) loop
          execute format('alter table ${name} alter column %I drop not null', r.attname);
        end loop;
      end $$`);
    }
    const sample = (org: string) => `
      select string_agg(quote_ident(a.attname), ', ' order by a.attnum) as columns,
             string_agg(case when a.attname = 'organization_id' then quote_literal($1)
                             else format('(%L::text)::%s', case when t.typcategory = 'N' then (1 + floor(random() * 1e6))::text
                                                               when t.typcategory = 'D' then '2026-01-01' when t.typcategory = 'B' then 'false'
                                                               when t.typcategory = 'A' then '{}' when t.typname = 'uuid' then gen_random_uuid()::text
                                                               when t.typtype = 'e' then (select e.enumlabel from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder limit 1)
                                                               when t.typname in ('jsonb', 'json') then '{}' else 'lp_' || substr(md5(random()::text), 1, 12) end,
                                         format_type(a.atttypid, a.atttypmod)) end, ', ' order by a.attnum) as values
        from pg_attribute a join pg_type t on t.oid = a.atttypid
       where a.attrelid = $2::regclass and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' and a.attidentity = ''
         and (a.attnotnull or a.attname = 'organization_id')`;
    const row = async (name: string, org: string) => {
      const [s] = await a.admin.unsafe(sample(org), [org, name]);
      return `insert into ${name} (${s!.columns}) values (${s!.values})`;
    };
    for (const { name } of tenant) {
      for (const org of [orgOther, orgOwn]) {
        // app.organizations: both rows exist already.
        if (name !== 'app.organizations') await a.admin.unsafe(await row(name, org));
      }
    }
    const others = Object.fromEntries(await Promise.all(tenant.map(async ({ name, key }) =>
      [name, (await a.admin.unsafe(`select count(*)::int as n from ${name} where ${key} <> $1`, [orgOwn]))[0]!.n as number])));
    t.same(tenant.filter(({ name }) => others[name]! < 1).map((r) => r.name), [], 'every table holds a row of another organization');

    // A function of each owner that runs what it is handed: a definer with a WHERE gone. The gate's
    // and the directory's policies show what their functions name: the request's organization and client.
    await a.admin.unsafe('create schema lp_probe');
    await a.admin.unsafe('grant usage on schema lp_probe to svc_runtime');
    for (const owner of OWNERS) {
      await a.admin.unsafe(`create function lp_probe.${owner}(p_statement text) returns bigint
        language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
        declare n bigint;
        begin
          perform set_config('svc.gate_organization', app.current_organization_id(), true);
          perform set_config('svc.directory_client', '${client.id}', true);
          if p_statement ~* '^\\s*select' then
            execute p_statement into n;
          else
            execute p_statement;
            get diagnostics n = row_count;
          end if;
          return n;
        end $$`);
      await a.admin.unsafe(`alter function lp_probe.${owner}(text) owner to ${owner}`);
      await a.admin.unsafe(`grant execute on function lp_probe.${owner}(text) to svc_runtime`);
    }

    const rt = postgres(a.runtimeUrl, oneConnection);
    t.teardown(() => rt.end());
    const privileges = await a.admin<{ owner: string; name: string; sel: boolean; upd: string | null; del: boolean; ins: boolean; key_update: boolean }[]>`
      select o as owner, c.oid::regclass::text as name,
             has_table_privilege(o, c.oid, 'select') as sel,
             (select a.attname from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
                 and a.attidentity = '' and has_column_privilege(o, c.oid, a.attnum, 'update') order by a.attnum limit 1) as upd,
             has_table_privilege(o, c.oid, 'delete') as del,
             has_table_privilege(o, c.oid, 'insert') as ins,
             c.oid <> 'app.organizations'::regclass and has_column_privilege(o, c.oid, 'organization_id', 'update') as key_update
        from unnest(${OWNERS}::text[]) o, pg_class c
       where c.oid = any(${tenant.map((r) => r.name)}::regclass[])
       order by 1, 2`;
    const leaks: string[] = [];
    const probed = { select: 0, update: 0, delete: 0, insert: 0, move: 0 };
    await rt.begin(async (tx) => {
      const begun = await beginRequest(tx as never, client);
      t.equal(begun.outcome, 'ok', 'a request of its own organization');
      // Each statement in a savepoint of its own, rolled back: what it changed, and its failure, go with it.
      const probe = async (owner: string, statement: string): Promise<{ n?: number; code?: string }> => {
        let n: number | undefined;
        try {
          await tx.savepoint(async (sp) => {
            n = Number((await sp.unsafe(`select lp_probe.${owner}($1) as n`, [statement]))[0]!.n);
            throw Object.assign(new Error('rolled back'), { code: 'PROBED' });
          });
        } catch (e: any) {
          if (e.code !== 'PROBED') return { code: e.code as string };
        }
        return { n };
      };
      const keyOf = new Map(tenant.map((r) => [r.name, r.key]));
      const mineOf = new Map<string, number>();
      for (const p of privileges) {
        const { owner, name } = p;
        const key = keyOf.get(name)!;
        if (p.sel) {
          probed.select++;
          // Refused (a column it may not read) reads nothing either.
          const r = await probe(owner, `select count(*) from ${name} where ${key} <> '${orgOwn}'`);
          if (!(r.n === 0 || r.code === '42501')) leaks.push(`${owner} reads ${name}: ${JSON.stringify(r)}`);
        }
        // A write with no WHERE: it may touch the request's own rows, never another's (counted as a
        // superuser would count them afterwards, within the savepoint).
        const writes: [keyof typeof probed, string | undefined][] = [
          ['update', p.upd ? `update ${name} set ${p.upd} = ${p.upd}` : undefined],
          ['delete', p.del ? `delete from ${name}` : undefined],
        ];
        for (const [kind, statement] of writes) {
          if (!statement) continue;
          probed[kind]++;
          const r = await probe(owner, statement);
          if (!mineOf.has(name)) mineOf.set(name, (await a.admin.unsafe(`select count(*)::int as n from ${name} where ${key} = $1`, [orgOwn]))[0]!.n);
          const mine = mineOf.get(name)!;
          if (r.code ? r.code !== '42501' : r.n! > mine) leaks.push(`${owner}: ${statement} touched ${JSON.stringify(r)} rows, ${mine} of its organization`);
        }
        if (p.ins && key === 'organization_id') {
          probed.insert++;
          const r = await probe(owner, await row(name, orgOther));
          if (r.code !== '42501') leaks.push(`${owner} inserts into ${name} for another organization: ${JSON.stringify(r)}`);
        }
        if (p.key_update) {
          probed.move++;
          const r = await probe(owner, `update ${name} set organization_id = '${orgOther}'`);
          if (!(r.code === '42501' || r.n === 0)) leaks.push(`${owner} moves ${name}'s rows to another organization: ${JSON.stringify(r)}`);
        }
      }
    });
    t.same(leaks, [], `no owner reads or changes another organization's row (${JSON.stringify(probed)} statements)`);
    t.ok(probed.select >= 100 && probed.update >= 50 && probed.insert >= 50, 'the owners\' privileges were probed');

    // The probes are not blind: a policy put back as it was before the commands came under the
    // policies (one that lets its role see every row) is found at once.
    await a.admin.unsafe(`create policy lp_loose on app.tasks for select to svc_api using (true)`);
    const loose = await rt.begin(async (tx) => {
      await beginRequest(tx as never, client);
      return (await tx.unsafe(`select lp_probe.svc_api($1) as n`, [`select count(*) from app.tasks where organization_id <> '${orgOwn}'`]))[0]!.n;
    });
    t.equal(Number(loose), 1, 'a policy that shows every row shows the other organization\'s task');
  });
