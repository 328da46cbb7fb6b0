-- migrate:up

/** Project and task files are for members and managers (app_private.file_read_roles). Until now
 * only api.files' WHERE said so: the policy on app.files let finance and hr see them, so that
 * app_private.file_for could tell them "not yours" (403 FILE_ACCESS_DENIED) rather than "no such
 * file" (404). A condition of a reader's own could be planned before that WHERE (migration
 * 20261205003050), and svc_api's own statements never had it. The rule is now in the policy, the
 * one place every reader passes; api.files no longer repeats it.
 *
 * The 403 keeps its meaning (docs/decisions.md "404 or 403": the caller sees the linked resource
 * but not its files): when the policy hides a file, app_private.file_link tells file_for which
 * resource the file is linked to (only that, only in the context's organization, as a definer),
 * and the caller's own view of that resource decides between 404 and 403. */
/** A policy's expression as a migration writes it, in its one-server form (`(select app.fn(…))`,
 * evaluated once per statement), or on Citus, which refuses a sublink in a policy on a distributed
 * table, with each such sublink replaced by the call itself (the rule of 20261205000200). A
 * migration that creates or alters a policy passes its expressions through it (db/README.md). */
create function app_private.policy_expression(p_expression text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_sublink constant text := '\(\s*select\s+((?:app|app_private)\.\w+\((?:[^()]|\([^()]*\))*\))(?:\s+as\s+\w+)?\s*\)';
  v_out text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return p_expression;
  end if;
  v_out := regexp_replace(p_expression, v_sublink, '\1', 'gi');
  if v_out ~* '\m(select|exists)\M' then
    perform app_private.raise('SV500', 'CITUS_POLICY_SUBLINK', format('a policy keeps a sublink: %s', v_out));
  end if;
  return v_out;
end
$$;
revoke all on function app_private.policy_expression(text) from public;

do $$
begin
  execute format('alter policy %I on app.files using (%s)', 'Files are visible where the linked resource is',
    app_private.policy_expression($e$(organization_id = (select app.current_organization_id())) and case linked_resource_type
           when 'invoice' then (select app.has_any_role('{manager,finance}'::text[]))
           when 'ticket' then (select app_private.may_read_tickets())
           else (select app.has_any_role('{member,manager}'::text[])) end$e$));
end
$$;

/** The resource a file of the context's organization is linked to, whoever may read the file. */
create function app_private.file_link(p_id text, out linked_resource_type text, out linked_resource_id text)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_org text := app.current_organization_id();
begin
  select f.linked_resource_type, f.linked_resource_id into linked_resource_type, linked_resource_id
    from app.files f where f.organization_id = v_org and f.id = p_id;
end
$$;
revoke all on function app_private.file_link(text) from public;
grant execute on function app_private.file_link(text) to svc_api;

create or replace function app_private.file_for(p_id text, p_write boolean) returns app.files
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v__organization_id text := app.current_organization_id();
  f app.files;
  l record;
begin
  select * into f from app.files x where x.organization_id = v__organization_id and x.id = p_id;
  if not found then
    l := app_private.file_link(p_id);
    if l.linked_resource_type is null
       or not app_private.linked_resource_visible(v__organization_id, l.linked_resource_type, l.linked_resource_id) then
      perform app_private.raise('SVN04', 'FILE_NOT_FOUND', format('no file %s in your organization', p_id));
    end if;
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', l.linked_resource_type,
             array_to_string(case when p_write then app_private.file_write_roles(l.linked_resource_type)
                                  else app_private.file_read_roles(l.linked_resource_type) end, ', ')));
  end if;
  if p_write and not app.has_any_role(app_private.file_write_roles(f.linked_resource_type)) then
    perform app_private.raise('SVR04', 'FILE_ACCESS_DENIED',
      format('the files of this %s are for the Roles %s', f.linked_resource_type,
             array_to_string(app_private.file_write_roles(f.linked_resource_type), ', ')));
  end if;
  return f;
end
$$;

create or replace view api.files as
select f.organization_id, f.id, f.status, f.linked_resource_type, f.linked_resource_id, f.content_type, f.created_at,
       jsonb_build_object('object', 'file', 'id', f.id, 'name', f.name, 'content_type', f.content_type, 'size_bytes', f.size_bytes,
         'sha256', f.sha256, 'status', f.status,
         'linked_resource', jsonb_build_object('type', f.linked_resource_type, 'id', f.linked_resource_id),
         'scan', jsonb_build_object('status', f.scan_status, 'signature', case when f.scan_status = 'infected' then f.scan_detail end),
         'rejection', case when f.status = 'rejected' then jsonb_build_object('code', f.rejection_code, 'detail', f.rejection_detail) end,
         'retention', jsonb_build_object('financial_record', f.retention is not null, 'legal_hold', f.legal_hold),
         'archived_at', app_private.iso_timestamp(f.archived_at),
         'created_at', app_private.iso_timestamp(f.created_at), 'updated_at', app_private.iso_timestamp(f.updated_at)) as doc,
       null::integer as version
  from app.files f;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205003300'); end $$;
