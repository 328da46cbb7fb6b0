-- migrate:up

/** The functions that run as their caller, owned by svc_owner too.
 *
 * An invoker function runs with its caller's rights whoever owns it, but its owner may change or
 * drop it, and a BI login or the runtime role that calls one owned by a superuser calls into a
 * superuser's object. Every function of ours that a request, a BI session or a job reaches (the
 * context accessors, the wire formatters, the worker's job functions, the invoker triggers) now
 * belongs to svc_owner. Left to the migrating role: the cluster's administration (`citus_*`
 * and the shard views' machinery, which DDL and the migrations run), the control plane (schema
 * control, which svc-admin runs) and the extensions' own functions. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

-- An owner uses the schema of what it owns: a Citus node being added refuses the function otherwise.
grant usage on schema skills to svc_owner;

do $$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_proc p
             join pg_namespace n on n.oid = p.pronamespace
             join pg_roles r on r.oid = p.proowner
            where r.rolsuper and not p.prosecdef and p.prokind = 'f'
              and n.nspname in ('api', 'app', 'app_private', 'reporting', 'skills')
              and p.proname !~ '^(citus_|shard_views_(create|drop)$|tg_shard_views_|shard_groups_|policy_expression$)'
              and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
            order by 1 loop
    execute format('alter function %s owner to svc_owner', f);
  end loop;
end
$$;

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';
do $$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_proc p
            where p.proowner = 'svc_owner'::regrole and not p.prosecdef and p.prokind = 'f'
              and p.oid not in ('app_private.accounting_connection(text)'::regprocedure,
                                'app_private.queue_job(text,text,json,text,integer,timestamp with time zone)'::regprocedure,
                                'app_private.webhook_enqueue(text,text,timestamp with time zone)'::regprocedure) loop
    execute format('alter function %s owner to %I', f, current_user);
  end loop;
end
$$;
revoke usage on schema skills from svc_owner;
