-- migrate:up

/** Two helpers every request runs, rewritten as single SQL expressions that the planner inlines into
 * the statement calling them, so no call is left (bench/sql-profile.ts, "Where PostgreSQL's time goes").
 * - app_private.iso_timestamp: a timestamp on the wire (RFC 3339, UTC, milliseconds), written by every
 *   api view and command, eight times for each task of a list page (408 calls a page). It was PL/pgSQL;
 *   now SQL, STABLE as to_char is (an IMMUTABLE function is not inlined around a STABLE one).
 * - app_private.read_flags: the read flags begin_request signs into the context. Its FROM clause kept
 *   it from being inlined, and a SQL function that is not inlined is planned again at each statement
 *   that calls it (61-103 µs a request). Now one expression of immutable operators (ltrim and ||,
 *   not concat_ws, which is STABLE).
 * Both answer exactly as before (test/db/inlined-helpers.test.ts compares read_flags with its former
 * text over every combination of its arguments). */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.iso_timestamp(ts timestamp with time zone) returns text
    language sql stable parallel safe
    as $$ select pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

create or replace function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) returns text
    language sql immutable parallel safe
    as $$
  select pg_catalog.ltrim(
           case when coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                                   or ('finance' = any (p_roles) and p_finance_tickets)
                                                   or ('hr' = any (p_roles) and p_hr_tickets)), false)
                then ',tickets' else '' end
        || case when coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                                   or ('finance' = any (p_roles) and p_finance_tickets)
                                                   or ('hr' = any (p_roles) and p_hr_tickets)), false)
                     and p_roles && '{member,manager}'::text[]
                then ',internal_notes' else '' end
        || case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries)
                then ',time_entries' else '' end, ',')
$$;

-- migrate:down

create or replace function app_private.iso_timestamp(ts timestamp with time zone) returns text
    language plpgsql immutable parallel safe
    as $$
begin
  return pg_catalog.to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
end
$$;

create or replace function app_private.read_flags(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean, p_hr_tickets boolean, p_hr_time_entries boolean) returns text
    language sql immutable parallel safe
    as $$
  select concat_ws(',',
    case when v_tickets then 'tickets' end,
    case when v_tickets and p_roles && '{member,manager}'::text[] then 'internal_notes' end,
    case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries) then 'time_entries' end)
    from (select coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                              or ('finance' = any (p_roles) and p_finance_tickets)
                                              or ('hr' = any (p_roles) and p_hr_tickets)), false) as v_tickets) x
$$;
