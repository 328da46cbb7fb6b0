-- migrate:up

/** Issue 21 (the webhook burst). A claim checks every event of its batch for the endpoint's client,
 * and each check set the client's delivery context again (its standing read, the context cleared,
 * set and signed). The context a check set in this transaction is now reused for the next check of
 * the same client: marked with svc.delivery_client, which only this function sets, and still
 * verified by context_ok() (signed for this backend and this transaction), so neither a context
 * begin_request set for a request nor one carried over from another transaction is taken for it. */
create or replace function app_private.client_may_read(p_client text, p_type text, p_resource_type text, p_resource_id text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_visible boolean;
begin
  if current_setting('svc.delivery_client', true) is distinct from p_client
     or current_setting('svc.client_id', true) is distinct from p_client
     or not app_private.context_ok() then
    perform set_config('svc.delivery_client', '', true);
    if not app_private.begin_delivery_context(p_client) then
      return false;
    end if;
    perform set_config('svc.delivery_client', p_client, true);
  end if;
  perform set_config('role', 'svc_runtime', true);
  v_visible := app_private.event_resource_visible(p_type, p_resource_type, p_resource_id);
  perform set_config('role', 'none', true);
  return v_visible;
end
$$;

-- migrate:down
create or replace function app_private.client_may_read(p_client text, p_type text, p_resource_type text, p_resource_id text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_visible boolean;
begin
  if not app_private.begin_delivery_context(p_client) then
    return false;
  end if;
  perform set_config('role', 'svc_runtime', true);
  v_visible := app_private.event_resource_visible(p_type, p_resource_type, p_resource_id);
  perform set_config('role', 'none', true);
  return v_visible;
end
$$;
