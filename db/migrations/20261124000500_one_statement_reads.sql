-- migrate:up

/** Issue 21: reads answered by one statement, with the response body built here. A document as
 * the wire shows it: `object` and `id` first (jsonb keeps keys sorted by length), then the rest.
 * One SQL expression, so the planner inlines it where the document is a column. */
create function app_private.wire_json(d jsonb) returns text
language sql immutable parallel safe
as $$
  select '{"object":' || (d -> 'object')::text || coalesce(',"id":' || (d -> 'id')::text, '')
         || coalesce(',' || nullif(substr((d - 'object' - 'id')::text, 2), '}'), '}')
$$;
grant execute on function app_private.wire_json(jsonb) to svc_runtime, svc_api;

-- migrate:down

drop function app_private.wire_json(jsonb);
