-- migrate:up

/** The cluster's baseline, 2 of 3: the BI relay. This folder's migrations run on a Citus
 * coordinator only, in one chain with db/migrations in version order (scripts/db.ts), after the
 * cluster's bootstrap (db/citus/bootstrap.sql) and as the deploy login; they replaced the cluster's
 * first baseline (20261206061400 to 20261206070100), which a superuser ran, and a database that ran
 * that one has their versions recorded instead (scripts/db.ts). */
set local check_function_bodies = false;
set local client_min_messages = warning;
set local search_path = '';

/** The BI relay (docs/scaling.md, "BI on a cluster"). A BI login connects to the coordinator, where
 * its organization is known (app_private.bi_logins); a reporting view reads api views whose
 * correlated subqueries Citus cannot plan across shards, and a shard query would reach a worker as
 * the BI login, where its organization is not known. So each reporting view on the coordinator reads
 * reporting_private.bi_rows('<view>'), which asks the worker that holds the organization for the rows
 * over a dblink connection of its own, as svc_reporting_relay, with a proof made for that worker
 * backend (app_private.bi_relay_proof); there reporting_private.bi_rows_of checks the proof, signs a
 * context for the organization and the login's Roles, and reads the original view (moved to
 * reporting_private) over the node's own shards, under the same policies as one server. The relay's
 * password alone reads nothing. The relay's functions belong to svc_relay, which is neither a
 * superuser nor bypasses row security. */
do $$
begin
  execute format('grant connect on database %I to svc_reporting_relay', current_database());
end
$$;

-- schema reporting_private

create schema reporting_private;

-- While this file runs, the owners of its functions and views may create in their schemas (`alter … owner
-- to` a role needs it when the migrating role is not a superuser); taken back at its end.
grant create on schema app_private, reporting, reporting_private to svc_api, svc_owner, svc_relay;

-- function app_private.backend_started()

create function app_private.backend_started() returns bigint
    language sql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
    select (extract(epoch from a.backend_start) * 1000000)::bigint from pg_stat_activity a where a.pid = pg_backend_pid()
  $$;

alter function app_private.backend_started() owner to svc_relay;

-- function app_private.bi_relay_proof(integer, bigint, text, text, text[])

create function app_private.bi_relay_proof(p_pid integer, p_started bigint, p_view text, p_organization_id text, p_roles text[]) returns text
    language plpgsql stable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  declare
    v_shard bigint := (select s.shardid from pg_dist_shard s where s.logicalrelid = 'app_private.relay_keys'::regclass);
    k record;
  begin
    if exists (select from pg_dist_placement p where p.shardid = v_shard and p.groupid = (select groupid from pg_dist_local_group)) then
      execute format('select inner_key, outer_key from app_private.%I', 'relay_keys_' || v_shard) into k;
    else
      select x.inner_key, x.outer_key into k from app_private.relay_keys x;
    end if;
    return encode(sha256(k.outer_key || sha256(k.inner_key || convert_to(concat_ws(chr(31), p_pid::text, p_started::text,
             p_view, p_organization_id, array_to_string(p_roles, ',')), 'UTF8'))), 'hex');
  end
  $$;

alter function app_private.bi_relay_proof(p_pid integer, p_started bigint, p_view text, p_organization_id text, p_roles text[]) owner to svc_relay;

-- function app_private.conninfo_value(text)

create function app_private.conninfo_value(p text) returns text
    language sql immutable
    set search_path to 'pg_catalog', 'pg_temp'
    as $$ select '''' || replace(replace(p, '\', '\\'), '''', '\''') || '''' $$;

alter function app_private.conninfo_value(p text) owner to svc_owner;

-- function app_private.reporting_rows_read(text)

create function app_private.reporting_rows_read(p_statement text) returns setof jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  begin
    return query execute format('select to_jsonb(r) from (%s) r', p_statement);
  end
  $$;

alter function app_private.reporting_rows_read(p_statement text) owner to svc_api;

comment on function app_private.reporting_rows_read(p_statement text) is 'The relay''s read of one reporting view''s query as svc_api, the owner the api views read as, under the request context reporting_private.bi_rows_of signed: the same rows a BI login reads on one server.';

-- function reporting_private.bi_rows(text)

create function reporting_private.bi_rows(p_view text) returns setof jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $$
  declare
    b record := app_private.bi_context();
    n record;
    v_auth text;
    v_connection text := 'svc_bi_relay_' || pg_backend_pid();
    v_pid integer;
    v_started bigint;
    v_statement text;
  begin
    if b.organization_id is null then
      return;
    end if;
    -- A coordinator's pg_dump restored as one database (db/README.md "Backup and restore") keeps
    -- these views and no shards: the rows are here, under the same policies.
    if not exists (select from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) then
      return query execute format('select to_jsonb(r) from reporting_private.%I r', p_view);
      return;
    end if;
    select nd.nodeid, nd.nodename, nd.nodeport into n
      from pg_dist_placement p join pg_dist_node nd using (groupid)
     where p.shardid = get_shard_id_for_distribution_column('app.organizations', b.organization_id)
       and nd.isactive and nd.noderole = 'primary'
     limit 1;
    if n.nodename is null then
      perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', 'no active worker holds this organization''s rows');
    end if;
    select a.authinfo into v_auth from pg_dist_authinfo a
     where a.rolename = 'svc_reporting_relay' and a.nodeid in (n.nodeid, 0)
     order by a.nodeid desc limit 1;
    if v_connection = any (coalesce(svc_dblink.dblink_get_connections(), '{}')) then
      perform svc_dblink.dblink_disconnect(v_connection);
    end if;
    -- dblink_connect_u: the relay's password comes from pg_dist_authinfo, or the node's own
    -- authentication (a certificate, .pgpass); the connection string is fixed here.
    perform svc_dblink.dblink_connect_u(v_connection,
      concat_ws(' ', format('host=%s port=%s dbname=%s user=svc_reporting_relay',
                            app_private.conninfo_value(n.nodename), n.nodeport, app_private.conninfo_value(current_database())),
                nullif(current_setting('citus.node_conninfo', true), ''), v_auth));
    begin
      select x.pid, x.started into v_pid, v_started
        from svc_dblink.dblink(v_connection, 'select pg_backend_pid(), (select (extract(epoch from a.backend_start) * 1000000)::bigint
                                                 from pg_stat_activity a where a.pid = pg_backend_pid())') as x(pid integer, started bigint);
      v_statement := format('select j::text from reporting_private.bi_rows_of(%L, %L, %L, %L) j', p_view, b.organization_id, b.svc_roles,
                            app_private.bi_relay_proof(v_pid, v_started, p_view, b.organization_id, b.svc_roles));
      return query select r.j::jsonb from svc_dblink.dblink(v_connection, v_statement) as r(j text);
    exception when others then
      perform svc_dblink.dblink_disconnect(v_connection);
      raise;
    end;
    perform svc_dblink.dblink_disconnect(v_connection);
  end
  $$;

alter function reporting_private.bi_rows(p_view text) owner to svc_relay;

comment on function reporting_private.bi_rows(p_view text) is 'A BI login''s read of a reporting view on a cluster: for the login''s organization and Roles (app_private.bi_context), it connects over dblink as svc_reporting_relay to the worker that holds that organization and calls reporting_private.bi_rows_of there with a proof bound to that worker''s backend (app_private.bi_relay_proof), so that the relay''s password alone reads nothing. It runs as svc_relay, which may open the relay''s connection and read its password where Citus keeps it; a BI login may not.';

-- function reporting_private.bi_rows_of(text, text, text[], text)

create function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) returns setof jsonb
    language plpgsql security definer
    set search_path to 'pg_catalog', 'pg_temp'
    as $_$
  declare
    v_view regclass;
    v_shard bigint;
    v_views text[];
    v_flags text;
    v_source text;
    v_scope text;
    r record;
  begin
    v_view := to_regclass('reporting_private.' || quote_ident(p_view));
    if session_user <> 'svc_reporting_relay' or p_organization_id is null or p_roles is null or v_view is null
       or p_proof is distinct from app_private.bi_relay_proof(pg_backend_pid(), app_private.backend_started(), p_view, p_organization_id, p_roles) then
      perform app_private.raise('SV500', 'REPORTING_RELAY_ONLY', 'reporting_private.bi_rows_of is for the reporting relay''s own sessions, with the coordinator''s proof');
    end if;
    v_shard := get_shard_id_for_distribution_column('app.organizations', p_organization_id);
    v_views := string_to_array(app_private.current_shard_views(v_shard), '|');
    if v_views is null or not exists (select from pg_dist_placement p where p.shardid = v_shard
                                         and p.groupid = (select groupid from pg_dist_local_group)) then
      -- Made again within a minute (the worker process's citus_prepare task).
      perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', 'this organization''s reporting rows are being moved: try again in a minute');
    end if;
    -- Nothing here may reach another node: Citus would replay this transaction's SET LOCAL strings
    -- on that connection, as its role. The organization's flags come from its own shard (not
    -- through set_context, which would read app.organizations through Citus), and the view is read
    -- over this node's copies of the api views and shards of the tables (below).
    -- The organization's policy for the relay shows the row of the organization the proof named alone.
    v_scope := set_config('svc.relay_organization', p_organization_id, true);
    execute format('select app_private.read_flags($1, o.ticket_module_enabled, o.finance_may_read_tickets, o.hr_may_read_tickets,
                      o.hr_may_read_time_entries) from app.%I o where o.id = $2', 'organizations_' || v_shard)
      into v_flags using p_roles, p_organization_id;
    v_scope := set_config('svc.relay_organization', '', true);
    if v_flags is null then
      return;
    end if;
    perform app_private.set_context(p_organization_id, null, p_roles, v_flags);
    v_source := rtrim(pg_get_viewdef(v_view), '; ');
    -- Every relation the view reads: an api view (this group's copy) or a table distributed by
    -- organization (its shard for this organization, which is here); anything else is refused.
    for r in select distinct n.nspname::text as schema, c.relname::text as name, c.oid as rel
               from pg_rewrite w
               join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = w.oid and d.refclassid = 'pg_class'::regclass
               join pg_class c on c.oid = d.refobjid join pg_namespace n on n.oid = c.relnamespace
              where w.ev_class = v_view and d.refobjid <> v_view loop
      if r.schema = 'api' and r.name = any (v_views) then
        v_source := regexp_replace(v_source, '(^|[^\w."])api\.' || r.name || '\M', '\1' || format('api_shard_%s.%I', v_shard, r.name), 'g');
      elsif exists (select from pg_dist_partition p where p.logicalrelid = r.rel and p.partmethod = 'h'
                      and p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'app.organizations'::regclass)) then
        v_source := regexp_replace(v_source, '(^|[^\w."])' || r.schema || '\.' || r.name || '\M',
                                   '\1' || format('%I.%I', r.schema, r.name || '_' || get_shard_id_for_distribution_column(r.rel, p_organization_id)), 'g');
      else
        perform app_private.raise('SV500', 'REPORTING_UNAVAILABLE', format('reporting view %s reads %s.%s, which this node cannot read alone', p_view, r.schema, r.name));
      end if;
    end loop;
    return query select * from app_private.reporting_rows_read(v_source);
  end
  $_$;

alter function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) owner to svc_relay;

comment on function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) is 'On the worker that holds the organization: the rows of reporting view p_view for p_organization_id and Roles p_roles, only in a session of svc_reporting_relay that carries the coordinator''s proof for this backend (REPORTING_RELAY_ONLY otherwise). It signs that organization''s request context and reads the view over this node''s copies of the api views and its shards, so the policies of that context decide the rows; it runs as svc_relay, which reads nothing without that context.';

-- table app_private.relay_keys

create table app_private.relay_keys (
    id integer default 1 not null,
    inner_key bytea not null,
    outer_key bytea not null,
    constraint relay_keys_id_check check ((id = 1)),
    constraint relay_keys_inner_key_check check ((length(inner_key) = 32)),
    constraint relay_keys_outer_key_check check ((length(outer_key) = 32))
);

comment on table app_private.relay_keys is 'On Citus: the key of the BI relay''s proofs, the same on every node (a reference table); read by superusers only.';

-- view reporting.approvals

create or replace view reporting.approvals with (security_barrier='true') as
 select r.approval_id,
    r.type,
    r.status,
    r.resource_type,
    r.resource_id,
    r.requested_at,
    r.decided_at,
    r.decision
   from reporting_private.bi_rows('approvals'::text) j(j),
    lateral jsonb_to_record(j.j) r(approval_id text, type text, status text, resource_type text, resource_id text, requested_at timestamp with time zone, decided_at timestamp with time zone, decision text);

alter table reporting.approvals owner to svc_api;

-- view reporting.invoices

create or replace view reporting.invoices with (security_barrier='true') as
 select r.invoice_id,
    r.number,
    r.status,
    r.customer_id,
    r.currency,
    r.issue_date,
    r.due_date,
    r.total,
    r.amount_paid,
    r.amount_due
   from reporting_private.bi_rows('invoices'::text) j(j),
    lateral jsonb_to_record(j.j) r(invoice_id text, number text, status text, customer_id text, currency text, issue_date date, due_date date, total numeric, amount_paid numeric, amount_due numeric);

alter table reporting.invoices owner to svc_api;

-- view reporting.members

create or replace view reporting.members with (security_barrier='true') as
 select r.member_id,
    r.display_name,
    r.status,
    r.job_title
   from reporting_private.bi_rows('members'::text) j(j),
    lateral jsonb_to_record(j.j) r(member_id text, display_name text, status text, job_title text);

alter table reporting.members owner to svc_api;

-- view reporting.payments

create or replace view reporting.payments with (security_barrier='true') as
 select r.payment_id,
    r.invoice_id,
    r.amount,
    r.currency,
    r.received_date,
    r.method
   from reporting_private.bi_rows('payments'::text) j(j),
    lateral jsonb_to_record(j.j) r(payment_id text, invoice_id text, amount numeric, currency text, received_date date, method text);

alter table reporting.payments owner to svc_api;

-- view reporting.projects

create or replace view reporting.projects with (security_barrier='true') as
 select r.project_id,
    r.code,
    r.name,
    r.status,
    r.start_date,
    r.end_date,
    r.customer_id,
    r.manager_member_id,
    r.created_at,
    r.updated_at
   from reporting_private.bi_rows('projects'::text) j(j),
    lateral jsonb_to_record(j.j) r(project_id text, code text, name text, status text, start_date date, end_date date, customer_id text, manager_member_id text, created_at timestamp with time zone, updated_at timestamp with time zone);

alter table reporting.projects owner to svc_api;

-- view reporting.tasks

create or replace view reporting.tasks with (security_barrier='true') as
 select r.task_id,
    r.project_id,
    r.name,
    r.status,
    r.priority,
    r.due_at,
    r.completed_at,
    r.archived,
    r.assignee_member_ids,
    r.created_at
   from reporting_private.bi_rows('tasks'::text) j(j),
    lateral jsonb_to_record(j.j) r(task_id text, project_id text, name text, status text, priority text, due_at timestamp with time zone, completed_at timestamp with time zone, archived boolean, assignee_member_ids text[], created_at timestamp with time zone);

alter table reporting.tasks owner to svc_api;

-- view reporting.tickets

create or replace view reporting.tickets with (security_barrier='true') as
 select r.ticket_id,
    r.number,
    r.subject,
    r.status,
    r.priority,
    r.assignee_member_id,
    r.project_id,
    r.created_at,
    r.resolved_at
   from reporting_private.bi_rows('tickets'::text) j(j),
    lateral jsonb_to_record(j.j) r(ticket_id text, number text, subject text, status text, priority text, assignee_member_id text, project_id text, created_at timestamp with time zone, resolved_at timestamp with time zone);

alter table reporting.tickets owner to svc_api;

-- view reporting.time_entries

create or replace view reporting.time_entries with (security_barrier='true') as
 select r.time_entry_id,
    r.member_id,
    r.project_id,
    r.task_id,
    r.work_date,
    r.minutes,
    r.billable,
    r.status
   from reporting_private.bi_rows('time_entries'::text) j(j),
    lateral jsonb_to_record(j.j) r(time_entry_id text, member_id text, project_id text, task_id text, work_date date, minutes integer, billable boolean, status text);

alter table reporting.time_entries owner to svc_api;

-- view reporting_private.approvals

create view reporting_private.approvals with (security_invoker='false', security_barrier='true') as
 select v.id as approval_id,
    (v.doc ->> 'type'::text) as type,
    (v.doc ->> 'status'::text) as status,
    (v.doc #>> '{resource,type}'::text[]) as resource_type,
    (v.doc #>> '{resource,id}'::text[]) as resource_id,
    ((v.doc ->> 'requested_at'::text))::timestamp with time zone as requested_at,
    ((v.doc ->> 'decided_at'::text))::timestamp with time zone as decided_at,
    (v.doc ->> 'decision'::text) as decision
   from api.approvals v;

alter table reporting_private.approvals owner to svc_api;

-- view reporting_private.invoices

create view reporting_private.invoices with (security_invoker='false', security_barrier='true') as
 select v.id as invoice_id,
    v.number,
    v.status,
    v.customer_id,
    v.currency,
    v.issue_date,
    v.due_date,
    ((v.doc ->> 'total'::text))::numeric as total,
    ((v.doc ->> 'amount_paid'::text))::numeric as amount_paid,
    ((v.doc ->> 'amount_due'::text))::numeric as amount_due
   from api.invoices v;

alter table reporting_private.invoices owner to svc_api;

-- view reporting_private.members

create view reporting_private.members with (security_invoker='false', security_barrier='true') as
 select v.id as member_id,
    (v.doc ->> 'display_name'::text) as display_name,
    (v.doc ->> 'status'::text) as status,
    (v.doc ->> 'job_title'::text) as job_title
   from api.members v;

alter table reporting_private.members owner to svc_api;

-- view reporting_private.payments

create view reporting_private.payments with (security_invoker='false', security_barrier='true') as
 select y.id as payment_id,
    y.invoice_id,
    y.amount,
    y.currency,
    y.received_date,
    y.method
   from app.payments y;

alter table reporting_private.payments owner to svc_api;

-- view reporting_private.projects

create view reporting_private.projects with (security_invoker='false', security_barrier='true') as
 select v.id as project_id,
    (v.doc ->> 'code'::text) as code,
    (v.doc ->> 'name'::text) as name,
    (v.doc ->> 'status'::text) as status,
    ((v.doc ->> 'start_date'::text))::date as start_date,
    ((v.doc ->> 'end_date'::text))::date as end_date,
    (v.doc ->> 'customer_id'::text) as customer_id,
    (v.doc ->> 'manager_member_id'::text) as manager_member_id,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone as created_at,
    ((v.doc ->> 'updated_at'::text))::timestamp with time zone as updated_at
   from api.projects v;

alter table reporting_private.projects owner to svc_api;

-- view reporting_private.tasks

create view reporting_private.tasks with (security_invoker='false', security_barrier='true') as
 select v.id as task_id,
    v.project_id,
    (v.doc ->> 'name'::text) as name,
    (v.doc ->> 'status'::text) as status,
    (v.doc ->> 'priority'::text) as priority,
    ((v.doc ->> 'due_at'::text))::timestamp with time zone as due_at,
    ((v.doc ->> 'completed_at'::text))::timestamp with time zone as completed_at,
    ((v.doc ->> 'archived'::text))::boolean as archived,
    array( select jsonb_array_elements_text(coalesce((v.doc -> 'assignee_member_ids'::text), '[]'::jsonb)) as jsonb_array_elements_text) as assignee_member_ids,
    ((v.doc ->> 'created_at'::text))::timestamp with time zone as created_at
   from api.tasks v;

alter table reporting_private.tasks owner to svc_api;

-- view reporting_private.tickets

create view reporting_private.tickets with (security_invoker='false', security_barrier='true') as
 select v.id as ticket_id,
    (v.doc ->> 'number'::text) as number,
    (v.doc ->> 'subject'::text) as subject,
    v.status,
    v.priority,
    v.assignee_member_id,
    v.project_id,
    v.created_at,
    ((v.doc ->> 'resolved_at'::text))::timestamp with time zone as resolved_at
   from api.tickets v;

alter table reporting_private.tickets owner to svc_api;

-- view reporting_private.time_entries

create view reporting_private.time_entries with (security_invoker='false', security_barrier='true') as
 select v.id as time_entry_id,
    v.member_id,
    v.project_id,
    (v.doc ->> 'task_id'::text) as task_id,
    v.work_date,
    ((v.doc ->> 'minutes'::text))::integer as minutes,
    v.billable,
    v.status
   from api.time_entries v
  where (v.deleted_at is null);

alter table reporting_private.time_entries owner to svc_api;

alter table only app_private.relay_keys
    add constraint relay_keys_pkey primary key (id);

select create_reference_table('app_private.relay_keys');
-- Two v4 UUIDs each, from the server's strong random source: 244 random bits per key.
insert into app_private.relay_keys (inner_key, outer_key)
values (decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
        decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'));

-- policy app.organizations The relay reads the organization a proof named

create policy "The relay reads the organization a proof named" on app.organizations for select to svc_relay using (id = current_setting('svc.relay_organization'::text, true));

comment on policy "The relay reads the organization a proof named" on app.organizations is 'svc_relay reads the one organization whose id reporting_private.bi_rows_of sets in svc.relay_organization around its read of the flags, after checking the coordinator''s proof: the organization the proof named, nothing else.';

revoke usage on schema app from svc_reporting;
grant usage on schema app to svc_relay;

revoke usage on schema app_private from svc_reporting;
grant usage on schema app_private to svc_relay;

grant usage on schema reporting_private to svc_reporting_relay;
grant usage on schema reporting_private to svc_relay;

grant usage on schema svc_dblink to svc_relay;

grant execute on function app.current_organization_id() to svc_relay;

grant execute on function app.current_roles() to svc_relay;

grant execute on function app_private.iso_timestamp(ts timestamp with time zone) to svc_relay;

grant select on table app.organizations to svc_relay;

grant execute on function app_private.money_text(p_amount numeric, p_scale integer) to svc_relay;

grant execute on function app.has_any_role(roles text[]) to svc_relay;

grant execute on function app.has_role(role text) to svc_relay;

grant execute on function app_private.member_hr_profile(p_org text, p_member_id text) to svc_relay;

grant execute on function app_private.readable_custom_fields(p_org text, p_object_type text, p_values jsonb) to svc_relay;

grant execute on function app.current_client_id() to svc_relay;

revoke all on function app_private.backend_started() from public;

grant execute on function app_private.bi_context(out organization_id text, out svc_roles text[]) to svc_relay;

revoke all on function app_private.bi_relay_proof(p_pid integer, p_started bigint, p_view text, p_organization_id text, p_roles text[]) from public;

revoke all on function app_private.conninfo_value(p text) from public;
grant execute on function app_private.conninfo_value(p text) to svc_worker;
grant execute on function app_private.conninfo_value(p text) to svc_admin;
grant execute on function app_private.conninfo_value(p text) to svc_relay;

grant execute on function app_private.context_ok() to svc_relay;

grant execute on function app_private.current_shard_views(p_shard bigint) to svc_relay;

grant execute on function app_private.integration_visible(p_category text) to svc_relay;

grant execute on function app_private.may_read_internal_notes() to svc_relay;

grant execute on function app_private.may_read_tickets() to svc_relay;

grant execute on function app_private.may_read_time_entries() to svc_relay;

grant execute on function app_private.raise(sqlstate text, code text, detail text, pointer text) to svc_relay;

grant execute on function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) to svc_relay;

revoke all on function app_private.reporting_rows_read(p_statement text) from public;
grant execute on function app_private.reporting_rows_read(p_statement text) to svc_owner;
grant execute on function app_private.reporting_rows_read(p_statement text) to svc_worker;
grant execute on function app_private.reporting_rows_read(p_statement text) to svc_admin;
grant execute on function app_private.reporting_rows_read(p_statement text) to svc_relay;

grant execute on function app_private.set_context(p_org text, p_client text, p_roles text[], p_flags text) to svc_relay;

grant execute on function app_private.wire_json(d jsonb) to svc_relay;

revoke all on function reporting_private.bi_rows(p_view text) from public;
grant execute on function reporting_private.bi_rows(p_view text) to svc_reporting;

revoke all on function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) from public;
grant execute on function reporting_private.bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text) to svc_reporting_relay;

grant select on table app.payments to svc_relay;

grant select on table app_private.relay_keys to svc_relay;

grant select on table reporting_private.approvals to svc_relay;

grant select on table reporting_private.invoices to svc_relay;

grant select on table reporting_private.members to svc_relay;

grant select on table reporting_private.payments to svc_relay;

grant select on table reporting_private.projects to svc_relay;

grant select on table reporting_private.tasks to svc_relay;

grant select on table reporting_private.tickets to svc_relay;

grant select on table reporting_private.time_entries to svc_relay;

revoke create on schema app_private, reporting, reporting_private from svc_api, svc_owner, svc_relay;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'the baseline is not undone: restore a backup, or drop the database'); end $$;
