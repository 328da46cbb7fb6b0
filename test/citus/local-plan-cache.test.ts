// On a worker, a statement whose distribution value is a parameter (every statement of a PL/pgSQL
// function: `where organization_id = p_organization_id`) reuses the local plan Citus caches for its
// shard (scripts/citus/local-plan-cache.patch). Unpatched, Citus planned the shard query again at
// every execution and kept each plan until the statement's own was dropped: 2,000 executions in one
// PL/pgSQL loop grew the backend's memory by megabytes.
import t from 'tap';
import postgres from 'postgres';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { oneConnection } from '../helpers/sql.ts';
import { editDatabaseUrl } from '../../src/db/url.ts';

if (CITUS_WORKERS.length === 0) {
  t.plan(0, 'runs on a Citus cluster: make test-citus');
} else {
  t.test('a parameterized statement on its shard\'s worker is planned once, not at every execution', async (t) => {
    const a = await startApp(t);
    const p = await a.principal('member,manager');
    const database = new URL(a.adminUrl).pathname.slice(1);
    const [{ port }] = await a.admin`select n.nodeport as port from pg_dist_shard s join pg_dist_placement pl using (shardid)
        join pg_dist_node n on n.groupid = pl.groupid
       where s.logicalrelid = 'app.organizations'::regclass
         and s.shardid = get_shard_id_for_distribution_column('app.organizations', ${p.orgId}::text)` as [{ port: number }];
    const worker = CITUS_WORKERS.find((u) => Number(new URL(u).port) === port)!;
    for (const role of ['svc_worker', 'postgres']) {
      let grown = '';
      const sql = postgres(editDatabaseUrl(worker, { database }), { ...oneConnection, onnotice: (n) => { grown = String(n.message); } });
      t.teardown(() => sql.end());
      // One statement, its plan made in the first 20 executions, then 2,000 more measured; the
      // memory is read as the superuser (pg_backend_memory_contexts), the statement runs as `role`.
      await sql.unsafe(`do $d$
        declare v_org text := '${p.orgId}'; m0 bigint; m1 bigint;
        begin
          execute 'set local role ${role}';
          for i in 1..2020 loop
            if i = 21 then
              execute 'reset role';
              select sum(total_bytes) into m0 from pg_backend_memory_contexts;
              execute 'set local role ${role}';
            end if;
            update app.webhook_endpoints x set consecutive_failures = 0 where x.organization_id = v_org and x.id = 'none';
          end loop;
          execute 'reset role';
          select sum(total_bytes) into m1 from pg_backend_memory_contexts;
          raise notice '%', m1 - m0;
        end $d$`);
      t.ok(Number(grown) < 1 << 20, `as ${role}: 2,000 executions grew the backend's memory by ${grown} bytes (less than 1 MiB)`);
    }
  });
}
