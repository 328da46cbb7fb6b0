-- migrate:up

/** Issues 17 and 21: the run event streams' wake-up (NOTIFY svc_run_events) carried the run's id, and
 * LISTEN needs no privilege, so any role of the database could follow which runs were active, and
 * when. The payload is now an opaque name for the run: the first 128 bits of
 * SHA-256(key || run id), with a random key made here that only the owner and the API's listener
 * read. The listener computes the same name for the runs it streams; a collision, or a guess, costs
 * one spurious re-read of a stream (the stream reads the log under the request's context). Prefix
 * keying is enough: the name is only matched, never verified, so length extension buys nothing. */
create table app_private.run_wake_key (
  singleton boolean primary key default true check (singleton),
  key bytea not null default decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex')
);
comment on table app_private.run_wake_key is 'The key of svc_run_events payloads (244 random bits); one row.';
insert into app_private.run_wake_key default values;

create function app_private.run_wake_name(p_run_id text) returns text
language sql stable
set search_path = pg_catalog
as $$
  select left(encode(sha256(k.key || convert_to(p_run_id, 'UTF8')), 'hex'), 32) from app_private.run_wake_key k
$$;

/** For the API's one listener per process (src/agents/hub.ts), read once when it starts listening. */
create function api.run_wake_key() returns text
language sql stable security definer
set search_path = pg_catalog
as $$ select encode(k.key, 'hex') from app_private.run_wake_key k $$;
grant execute on function api.run_wake_key() to svc_runtime;

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
  perform pg_notify('svc_run_events', p_run_id);
  return v_seq;
end
$$;

drop function api.run_wake_key();
drop function app_private.run_wake_name(text);
drop table app_private.run_wake_key;
