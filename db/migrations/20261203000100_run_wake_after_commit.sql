-- migrate:up

/** Issues 17 and 21: a run's status changed by an API request (cancelRun) notified svc_run_events
 * from the request's own transaction, and NOTIFY takes one lock for the whole database from its
 * pre-commit step until its commit record is flushed, serializing every notifying commit (the
 * webhook fan-out's wake-up was moved out of requests for this, 20261201000100). Inside an API
 * request's transaction (svc.fanout_wake set by begin_request) the run's wake name is now added to
 * svc.run_wake instead; the API reads it with its COMMIT and notifies after the commit from a
 * transaction of its own, which writes no WAL. The worker and every other writer notify at commit. */
create or replace function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) returns integer
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_seq integer;
  v_name text;
  v_pending text;
begin
  -- Callers hold the run's row lock, so this max is not raced.
  v_seq := coalesce((select max(e.seq) from app.run_events e where e.organization_id = p_org and e.run_id = p_run_id), 0) + 1;
  insert into app.run_events (organization_id, run_id, seq, type, data) values (p_org, p_run_id, v_seq, p_type, p_data);
  v_name := app_private.run_wake_name(p_run_id);
  if current_setting('svc.fanout_wake', true) in ('after_commit', 'due') then
    v_pending := nullif(current_setting('svc.run_wake', true), '');
    if v_pending is null then
      perform set_config('svc.run_wake', v_name, true);
    elsif position(v_name in v_pending) = 0 then
      perform set_config('svc.run_wake', v_pending || ',' || v_name, true);
    end if;
  else
    perform pg_notify('svc_run_events', v_name);
  end if;
  return v_seq;
end
$$;


-- migrate:down

create or replace function app_private.run_event(p_org text, p_run_id text, p_type text, p_data jsonb) returns integer
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_seq integer;
begin
  -- Callers hold the run's row lock, so this max is not raced.
  v_seq := coalesce((select max(e.seq) from app.run_events e where e.organization_id = p_org and e.run_id = p_run_id), 0) + 1;
  insert into app.run_events (organization_id, run_id, seq, type, data) values (p_org, p_run_id, v_seq, p_type, p_data);
  perform pg_notify('svc_run_events', app_private.run_wake_name(p_run_id));
  return v_seq;
end
$$;
