-- migrate:up

/** Issue 37: the same migrations give a distributed schema on a Citus coordinator.
 *
 * Where the citus extension is installed and workers are added, every tenant table is distributed
 * by organization_id, all colocated with app.organizations (distributed by its id: its triggers
 * seed each organization's rows, which only a colocated trigger may write), and the global tables
 * in the list below become reference tables; the token signing keys, the rate-limit buckets
 * (unlogged, per-process leases) and graphile-worker's schema stay on the coordinator, and the
 * request context's key is a table of each node's own. Everywhere else this migration
 * does nothing. Then every function of ours is made a distributed object, so that it exists on
 * every node (a function created before the tables it names were distributed exists only on the
 * coordinator). docs/scaling.md says what runs where; test/citus/placement.test.ts checks it. */
do $$
declare
  v_reference text[] := array['app_private.currencies', 'app_private.event_types',
    'app_private.report_definitions', 'app_private.agent_skills', 'app_private.agent_definitions',
    'app_private.run_wake_key'];
  -- Read and written only where requests arrive: no worker needs them, and a write to a reference
  -- table would open connections to every worker.
  -- app_private.bi_logins: a BI session's login names its organization, looked up by role name
  -- (not the distribution column) in every statement of the session; kept where the session is.
  v_coordinator text[] := array['app_private.rate_limit_buckets', 'app_private.signing_keys', 'app_private.bi_logins'];
  v_sublink text := '\(\s*SELECT\s+((?:app|app_private)\.\w+\((?:[^()]|\([^()]*\))*\))\s+AS\s+\w+\)';
  v_qual text;
  v_check text;
  v_tenant text[];
  v_keys text[] := '{}';
  v_table text;
  r record;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  if not (select count(*) > 0 from pg_dist_node where noderole = 'primary' and groupid <> 0) then
    perform app_private.raise('SV500', 'CITUS_WITHOUT_WORKERS', 'the citus extension is installed but no worker is added: add the workers (citus_add_node) before migrating');
  end if;
  -- Triggers on distributed tables (ours write only their own organization's colocated rows).
  perform set_config('citus.enable_unsafe_triggers', 'on', true);
  -- Create each table's shards over one connection per worker: a transaction that wrote through
  -- several connections could not then create shards that reference those rows.
  perform set_config('citus.multi_shard_modify_mode', 'sequential', true);

  -- Citus refuses a sublink in a policy on a distributed table: each `(select app.fn(…))` becomes
  -- the call itself (evaluated where the rows are; per scan rather than once per statement).
  for r in select schemaname, tablename, policyname, qual, with_check from pg_policies
            where schemaname in ('app', 'app_private') loop
    v_qual := regexp_replace(r.qual, v_sublink, '\1', 'g');
    v_check := regexp_replace(r.with_check, v_sublink, '\1', 'g');
    if concat(v_qual, ' ', v_check) ~* '\m(select|exists)\M' then
      perform app_private.raise('SV500', 'CITUS_POLICY_SUBLINK', format('policy %s on %s.%s keeps a sublink', r.policyname, r.schemaname, r.tablename));
    end if;
    execute format('alter policy %I on %I.%I%s%s', r.policyname, r.schemaname, r.tablename,
                   case when v_qual is not null then format(' using (%s)', v_qual) end,
                   case when v_check is not null then format(' with check (%s)', v_check) end);
  end loop;

  select array_agg(format('%I.%I', n.nspname, c.relname)::text order by 1) into v_tenant
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname in ('app', 'app_private') and c.relkind = 'r'
     and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped)
     and format('%I.%I', n.nspname, c.relname) <> all (v_coordinator);
  -- Citus distributes no table that a local table references, nor one that references a local
  -- table (and would turn a local table that references a reference table into a table of its
  -- own kind): every foreign key between our tables is taken off, the tables are placed, and the
  -- same keys are put back (checked again, shard by shard).
  for r in select k.conrelid::regclass::text as tbl, k.conname, pg_get_constraintdef(k.oid) as def
             from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
            where k.contype = 'f' and n.nspname in ('app', 'app_private')
            order by 1, 2 loop
    v_keys := v_keys || format('alter table %s add constraint %I %s', r.tbl, r.conname, r.def);
    execute format('alter table %s drop constraint %I', r.tbl, r.conname);
  end loop;
  foreach v_table in array v_reference loop
    perform create_reference_table(v_table::regclass);
  end loop;
  perform create_distributed_table('app.organizations', 'id');
  foreach v_table in array v_tenant loop
    perform create_distributed_table(v_table::regclass, 'organization_id', colocate_with => 'app.organizations');
  end loop;
  -- A coordinator table keeps no key to a distributed one (Citus cannot check it there; an
  -- organization is never deleted, so its BI logins lose no cascade).
  foreach v_table in array v_keys loop
    if split_part(v_table, ' ', 3) <> all (v_coordinator) then
      execute v_table;
    end if;
  end loop;

  -- The request context's signing key: a table of each node's own (a delegated call reads it in
  -- the worker backend that signs and checks the context; Citus cannot read a reference table
  -- there), with a key of each node's own: a context is checked only where it was signed.
  perform run_command_on_workers($w$
    create table if not exists app_private.context_keys (
      id boolean primary key default true constraint context_keys_one_row check (id),
      inner_key bytea not null,
      outer_key bytea not null);
    do $k$
    declare
      k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
              || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
      i bytea := k;
      o bytea := k;
    begin
      for n in 0..63 loop
        i := set_byte(i, n, get_byte(k, n) # 54);
        o := set_byte(o, n, get_byte(k, n) # 92);
      end loop;
      insert into app_private.context_keys (inner_key, outer_key) values (i, o) on conflict do nothing;
    end
    $k$;
    revoke all on app_private.context_keys from public$w$);

  for r in select p.oid::regprocedure::text as fn
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('app', 'app_private', 'api', 'control', 'skills', 'reporting') and p.prokind in ('f', 'p')
              and not exists (select from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid) loop
    perform create_distributed_function(r.fn::regprocedure);
  end loop;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205000200 (on Citus, undistribute_table each table first)'); end $$;
