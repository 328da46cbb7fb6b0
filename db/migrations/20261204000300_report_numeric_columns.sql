-- migrate:up

/** Issue 36: a CSV export neutralises every text cell a spreadsheet would evaluate (OWASP "CSV
 * Injection": one starting with =, +, -, @, a tab or a carriage return gets a leading '), except
 * in the columns named here, whose values the report itself writes as decimal numbers in strings
 * (money, ratios, hours). Numbers that are JSON numbers (counts, minutes) are never text cells. */
alter table app_private.report_definitions add column numeric_columns text[] not null default '{}';
alter table app_private.report_definitions
  add constraint report_definitions_numeric_columns_are_columns check (numeric_columns <@ columns);

update app_private.report_definitions set numeric_columns = '{utilization,billable_utilization}' where id = 'rpt_member_utilization';
update app_private.report_definitions set numeric_columns = '{due_0_30,due_31_60,due_61_90,due_over_90,total_due}' where id = 'rpt_invoice_aging';
update app_private.report_definitions set numeric_columns = '{amount}' where id = 'rpt_payments_received';
update app_private.report_definitions set numeric_columns = '{median_hours_to_resolution}' where id = 'rpt_ticket_volume';

/** The download now also says which columns hold decimal numbers. Same checks, same owner. */
drop function api.report_download_begin(text);
create function api.report_download_begin(p_token text)
returns table (outcome text, run_id text, report_id text, format text, row_count integer, columns text[], numeric_columns text[])
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_message text;
  r app.report_runs;
begin
  outcome := 'not_found';
  if p_token !~ '^rrun_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$' then
    return next;
    return;
  end if;
  v_message := array_to_string(v_parts[1:3], '.');
  if sha256(convert_to(v_parts[4], 'UTF8')) <> sha256(convert_to(app_private.capability_mac('report-download', v_message), 'UTF8')) then
    return next;
    return;
  end if;
  if v_parts[3]::bigint <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_parts[2]) then
    outcome := 'client_inactive';
  else
    select x.* into r from app.report_runs x join api.report_runs v on v.id = x.id where x.id = v_parts[1];
    if found and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      select d.columns, d.numeric_columns into columns, numeric_columns
        from app_private.report_definitions d where d.id = r.report_id;
    end if;
  end if;
  return next;
end
$$;
grant execute on function api.report_download_begin(text) to svc_runtime;

-- migrate:down

drop function api.report_download_begin(text);
create function api.report_download_begin(p_token text)
returns table (outcome text, run_id text, report_id text, format text, row_count integer, columns text[])
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_parts text[] := string_to_array(p_token, '.');
  v_message text;
  r app.report_runs;
begin
  outcome := 'not_found';
  if p_token !~ '^rrun_[A-Za-z0-9]{1,64}\.apic_[A-Za-z0-9]{1,64}\.[0-9]{1,12}\.[0-9a-f]{64}$' then
    return next;
    return;
  end if;
  v_message := array_to_string(v_parts[1:3], '.');
  if sha256(convert_to(v_parts[4], 'UTF8')) <> sha256(convert_to(app_private.capability_mac('report-download', v_message), 'UTF8')) then
    return next;
    return;
  end if;
  if v_parts[3]::bigint <= extract(epoch from now()) then
    outcome := 'expired';
  elsif not app_private.begin_delivery_context(v_parts[2]) then
    outcome := 'client_inactive';
  else
    select x.* into r from app.report_runs x join api.report_runs v on v.id = x.id where x.id = v_parts[1];
    if found and r.status = 'succeeded' and not r.results_purged and r.expires_at > now() then
      outcome := 'ok';
      run_id := r.id;
      report_id := r.report_id;
      format := r.format;
      row_count := r.row_count;
      columns := (select d.columns from app_private.report_definitions d where d.id = r.report_id);
    end if;
  end if;
  return next;
end
$$;
grant execute on function api.report_download_begin(text) to svc_runtime;

alter table app_private.report_definitions drop column numeric_columns;
