-- migrate:up

/** On Citus, the previous migration's settings on every worker. On one server it does nothing. */
select app_private.citus_node_grants();

-- migrate:down
do $do$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform run_command_on_workers($w$
      do $g$
      begin
        set local citus.enable_ddl_propagation = off;
        alter role svc_runtime reset track_activities;
        alter role svc_worker reset track_activities;
        alter role svc_admin reset track_activities;
      end
      $g$ $w$);
  end if;
end
$do$;
