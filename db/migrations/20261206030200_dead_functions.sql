-- migrate:up

/** Functions nothing calls: app_private.tg_invoice_lines__totals (a row trigger's function no
 * trigger runs: invoice lines' statement triggers call app_private.invoice_recompute_totals),
 * app_private.file_readable (the files policy names each linked type's Roles in its own CASE) and
 * app_private.citus_read_view_functions (a rewrite of function bodies that the Citus migrations
 * before the baseline ran). test/db/functions-called.test.ts finds a function nothing calls. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

drop function app_private.tg_invoice_lines__totals();
drop function app_private.file_readable(text);
drop function app_private.citus_read_view_functions(regprocedure[]);

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create function app_private.tg_invoice_lines__totals() returns trigger
  language plpgsql
  security definer
  set search_path to 'pg_catalog', 'pg_temp'
as $function$
declare
  v_invoice text := coalesce(new.invoice_id, old.invoice_id);
begin
  update app.invoices i
     set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
    from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
            from app.invoice_lines l where l.invoice_id = v_invoice) t
   where i.id = v_invoice
     and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  return null;
end
$function$;
alter function app_private.tg_invoice_lines__totals() owner to svc_owner;
revoke all on function app_private.tg_invoice_lines__totals() from public;
grant execute on function app_private.tg_invoice_lines__totals() to svc_worker, svc_admin;

create function app_private.file_readable(p_type text) returns boolean
  language sql
  stable security definer
  set search_path to 'pg_catalog', 'pg_temp'
as $function$ select case p_type when 'ticket' then app_private.may_read_tickets() else app.has_any_role(app_private.file_read_roles(p_type)) end $function$;
alter function app_private.file_readable(text) owner to svc_owner;
revoke all on function app_private.file_readable(text) from public;
grant execute on function app_private.file_readable(text) to svc_api, svc_worker, svc_admin;

create function app_private.citus_read_view_functions(p_functions regprocedure[]) returns void
  language plpgsql
  set search_path to 'pg_catalog', 'pg_temp'
as $function$
declare
  v_views text;
  v_old text;
  v_def text;
  f regprocedure;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  select string_agg(c.relname, '|') into v_views from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v';
  foreach f in array coalesce(p_functions, '{}') loop
    v_old := pg_get_functiondef(f);
    v_def := regexp_replace(v_old, '(from|join)(\s+)api\.(' || v_views || ')(\s+)([a-z_]+)(\s+where\s+)\5\.id(\s*=\s*)([lpv]_?[a-z_.]+)(?![\w(])(?!\s*-)',
                            '\1\2api.\3(\8)\4\5\6\5.id\7\8', 'g');
    v_def := regexp_replace(v_def, '(from|join)(\s+)api\.(' || v_views || ')\M(?!\()', '\1\2api.\3()', 'g');
    if v_def <> v_old then
      execute v_def;
    end if;
  end loop;
end
$function$;
revoke all on function app_private.citus_read_view_functions(regprocedure[]) from public;
