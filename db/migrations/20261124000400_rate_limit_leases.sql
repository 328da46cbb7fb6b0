-- migrate:up

/** Rate limits by lease: an instance reserves a few admissions of a key's window at a time and
 * spends them locally, so the shared count is never exceeded (the old scheme added counts after
 * the fact and could overshoot when a neighbour was busy). Grants shrink to one as the window
 * fills (an eighth of what is left, or what the instance's waiting requests need), so near the limit every
 * admission is a reservation; unused leases go back after a second of idleness. */
create function api.rate_limit_lease(p_key text, p_window bigint, p_want integer, p_limit integer)
returns table (granted integer, hits integer, window_start bigint)
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  b record;
begin
  loop
    select r.window_start, r.hits into b from app_private.rate_limit_buckets r where r.key = p_key for update;
    if found then
      exit;
    end if;
    insert into app_private.rate_limit_buckets as r (key, window_start, hits) values (p_key, p_window, 0)
    on conflict (key) do nothing;
  end loop;
  window_start := greatest(b.window_start, p_window);
  hits := case when b.window_start = window_start then b.hits else 0 end;
  -- What the callers wait for, or an eighth of what is left (at most 100), whichever is more.
  granted := greatest(0, least(greatest(p_want, least(100, (p_limit - hits) / 8)), p_limit - hits));
  hits := hits + granted;
  update app_private.rate_limit_buckets r set window_start = rate_limit_lease.window_start, hits = rate_limit_lease.hits
   where r.key = p_key;
  return next;
end
$$;
grant execute on function api.rate_limit_lease(text, bigint, integer, integer) to svc_runtime;

/** Gives back admissions leased and not spent (only within the same window). */
create function api.rate_limit_release(p_keys text[], p_windows bigint[], p_unused integer[])
returns void
language sql volatile security definer
set search_path = pg_catalog
as $$
  update app_private.rate_limit_buckets b
     set hits = greatest(0, b.hits - u.n)
    from unnest(p_keys, p_windows, p_unused) as u(k, w, n)
   where b.key = u.k and b.window_start = u.w
$$;
grant execute on function api.rate_limit_release(text[], bigint[], integer[]) to svc_runtime;

drop function api.rate_limit_add(text[], bigint[], integer[]);

-- migrate:down

create function api.rate_limit_add(p_keys text[], p_windows bigint[], p_hits integer[])
returns table (key text, window_start bigint, hits integer)
language sql volatile security definer
set search_path = pg_catalog
as $$
  insert into app_private.rate_limit_buckets as b (key, window_start, hits)
  select k, w, h from unnest(p_keys, p_windows, p_hits) as u(k, w, h) order by k
  on conflict (key) do update
    set window_start = greatest(b.window_start, excluded.window_start),
        hits = case when b.window_start = excluded.window_start then b.hits + excluded.hits
                    when b.window_start > excluded.window_start then b.hits
                    else excluded.hits end
  returning b.key, b.window_start, b.hits
$$;
grant execute on function api.rate_limit_add(text[], bigint[], integer[]) to svc_runtime, svc_api;
drop function api.rate_limit_release(text[], bigint[], integer[]);
drop function api.rate_limit_lease(text, bigint, integer, integer);
