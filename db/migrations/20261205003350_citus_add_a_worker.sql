-- migrate:up

/** Issue 37: growing a cluster in one command. A worker added with citus_add_node alone gets our
 * schemas, functions, roles and reference tables from Citus, but not what is each node's own: its
 * request-context key (app_private.context_keys, made by 20261205000200 on the workers there were
 * then), the privileges of our functions and views (Citus creates them with their owner's
 * defaults), and the copies of the api views over the shard groups it comes to hold (20261205003100).
 * A shard moved by a rebalance leaves its organizations reading the view functions (correct, slower)
 * until the copies are made again. docs/scaling.md "Growing the cluster" says what to run;
 * test/citus/add-worker.test.ts adds a worker and serves a moved organization from it. */

/** On the coordinator: each worker's context key where it has none (a key once made is never
 * replaced here: it signs the contexts of requests in flight). */
create function app_private.citus_context_keys() returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  v_failed text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') into v_failed
    from run_command_on_workers($w$
      do $k$
      declare
        k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
                || sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
        i bytea := k;
        o bytea := k;
      begin
        set local citus.enable_ddl_propagation = off;
        create table if not exists app_private.context_keys (
          id boolean primary key default true constraint context_keys_one_row check (id),
          inner_key bytea not null,
          outer_key bytea not null);
        revoke all on app_private.context_keys from public;
        for n in 0..63 loop
          i := set_byte(i, n, get_byte(k, n) # 54);
          o := set_byte(o, n, get_byte(k, n) # 92);
        end loop;
        insert into app_private.context_keys (inner_key, outer_key) values (i, o) on conflict do nothing;
      end
      $k$ $w$)
   where not success;
  if v_failed is not null then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', format('making the workers'' context keys failed: %s', v_failed));
  end if;
end
$$;
revoke execute on function app_private.citus_context_keys() from public;

/** On the coordinator: every worker made ready for requests, as far as each node's own things go
 * (context key, privileges of functions, views and shards, copies of the api views). After a rebalance or a shard move run by hand:
 * `call app_private.citus_prepare_workers()`. */
create procedure app_private.citus_prepare_workers()
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform app_private.citus_context_keys();
  -- A moved shard is made anew without the column grants of 20261205000600: svc_api's inserts there
  -- were refused (measured).
  call app_private.citus_shard_privileges();
  call app_private.citus_copy_privileges();
end
$$;
revoke execute on procedure app_private.citus_prepare_workers() from public;

/** On the coordinator, outside a transaction block (`call app_private.citus_add_worker(host,
 * port)`): the node added, given its context key, our privileges and the copies of the api views,
 * the shards rebalanced onto it, and the copies made again everywhere for the shard groups that
 * moved. Each step commits: the rebalance runs in Citus's background jobs, and each step reaches the
 * workers over connections of their own, which see only what is committed. Run again after a
 * failure: every step is idempotent (an added node is kept). p_shard_transfer_mode is
 * citus_rebalance_start's ('auto' needs wal_level = logical; 'block_writes' pauses the writes of
 * each shard group while it moves). */
create procedure app_private.citus_add_worker(p_host text, p_port integer, p_shard_transfer_mode text default 'auto')
language plpgsql
-- No SET search_path: a procedure with one may not commit. Every name below is schema-qualified.
as $$
begin
  if not exists (select from pg_catalog.pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'CITUS_WORKER_NOT_READY', 'this database has no citus extension: there is no cluster to grow');
  end if;
  if not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port) then
    perform pg_catalog.citus_add_node(p_host, p_port);
  elsif not exists (select from pg_catalog.pg_dist_node where nodename = p_host and nodeport = p_port and isactive) then
    perform pg_catalog.citus_activate_node(p_host, p_port);
  end if;
  commit;
  call app_private.citus_prepare_workers();
  commit;
  -- A rebalance still running (this call run again after its wait was cut short) is waited for,
  -- not started twice (Citus refuses that).
  if not exists (select from pg_catalog.pg_dist_background_job where state in ('scheduled', 'running', 'cancelling', 'failing')) then
    perform pg_catalog.citus_rebalance_start(shard_transfer_mode => p_shard_transfer_mode::citus.shard_transfer_mode);
  end if;
  commit;
  perform pg_catalog.citus_rebalance_wait();
  commit;
  -- The moved shard groups: copies on the nodes that now hold them, none where they left.
  call app_private.citus_prepare_workers();
end
$$;
revoke execute on procedure app_private.citus_add_worker(text, integer, text) from public;

-- migrate:down
drop procedure app_private.citus_add_worker(text, integer, text);
drop procedure app_private.citus_prepare_workers();
drop function app_private.citus_context_keys();
