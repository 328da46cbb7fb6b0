-- migrate:up

/** Webhooks: an endpoint is disabled once its consecutive failures reach the threshold and its
 * streak has lasted the window (SVC_WEBHOOK_DISABLE_AFTER_FAILURES, _SECONDS). The window was
 * measured to now(), the transaction's start: the attempts of one endpoint's deliveries are
 * recorded concurrently, each waits for the endpoint's row, and a transaction that began before
 * the one that started the streak (and set failing_since to its own, later, now()) found the
 * streak not yet begun. With the threshold reached by that failure and no failure after it, the
 * endpoint stayed enabled (test/http/webhooks.test.ts failed so in CI). Now the window is measured
 * to the clock when the row is held. Only that condition changes. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

create or replace function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  v_ok boolean := p_response_status between 200 and 299 and p_error is null;
  v_next timestamptz;
  v_outcome text;
  -- A value, not now(): Citus takes no volatile function inside CASE or COALESCE of a write.
  v_now timestamptz := now();
begin
  select * into d from app.webhook_deliveries x where x.organization_id = p_organization_id and x.id = p_delivery for update;
  if not found or d.status <> 'pending' or d.attempt_count <> p_attempt then
    return 'stale';
  end if;
  insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status, error)
  values (p_organization_id, d.id, p_attempt, p_started_at, p_duration_ms, p_response_status, left(p_error, 500));
  if v_ok then
    update app.webhook_deliveries x set status = 'succeeded', status_reason = null, completed_at = now(), lease_until = null,
                                        next_attempt_at = null
     where x.organization_id = p_organization_id and x.id = d.id;
    update app.webhook_endpoints x set consecutive_failures = 0, failing_since = null
     where x.organization_id = p_organization_id and x.id = d.endpoint_id
       and (x.consecutive_failures <> 0 or x.failing_since is not null);
    return 'succeeded';
  end if;
  if p_retryable then
    v_next := now() + greatest(app_private.webhook_retry_delay(p_attempt, p_scale),
                               make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400) * p_scale));
  end if;
  -- The schedule's next step may overshoot the 72 hours: the last attempt is then at retry_until.
  if p_retryable and now() < d.retry_until then
    v_next := least(v_next, d.retry_until);
    update app.webhook_deliveries x set next_attempt_at = v_next, lease_until = null, status_reason = null
     where x.organization_id = p_organization_id and x.id = d.id;
    perform app_private.webhook_enqueue(p_organization_id, d.id, v_next);
    v_outcome := 'retrying';
  else
    update app.webhook_deliveries x
       set status = 'failed', completed_at = now(), lease_until = null, next_attempt_at = null,
           status_reason = case when p_retryable then 'retry_period_exhausted' else 'permanent_failure' end
     where x.organization_id = p_organization_id and x.id = d.id;
    v_outcome := 'failed';
  end if;
  update app.webhook_endpoints x
     set consecutive_failures = x.consecutive_failures + 1, failing_since = coalesce(x.failing_since, v_now)
   where x.organization_id = p_organization_id and x.id = d.endpoint_id
  returning * into w;
  -- The clock, not now(): a transaction that began before the one that started the streak waited
  -- for the endpoint's row, and its now() is earlier than that failing_since.
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= clock_timestamp() - make_interval(secs => p_disable_after_seconds) then
    update app.webhook_endpoints x set status = 'disabled', disabled_reason = 'delivery_failures'
     where x.organization_id = p_organization_id and x.id = w.id;
    insert into app_private.admin_notifications (organization_id, kind, subject_id, detail)
    values (p_organization_id, 'webhook_endpoint_disabled', w.id,
            format('webhook endpoint %s of client %s was disabled after %s consecutive failed deliveries since %s',
                   w.id, w.client_id, w.consecutive_failures, w.failing_since));
    v_outcome := v_outcome || ',endpoint_disabled';
  end if;
  return v_outcome;
end
$$;

-- migrate:down
set local lock_timeout = '3s';

create or replace function app_private.webhook_record_attempt(p_organization_id text, p_delivery text, p_attempt integer, p_started_at timestamp with time zone, p_duration_ms integer, p_response_status integer, p_error text, p_retryable boolean, p_retry_after_seconds integer, p_scale double precision, p_disable_after integer, p_disable_after_seconds integer) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  d app.webhook_deliveries;
  w app.webhook_endpoints;
  v_ok boolean := p_response_status between 200 and 299 and p_error is null;
  v_next timestamptz;
  v_outcome text;
  -- A value, not now(): Citus takes no volatile function inside CASE or COALESCE of a write.
  v_now timestamptz := now();
begin
  select * into d from app.webhook_deliveries x where x.organization_id = p_organization_id and x.id = p_delivery for update;
  if not found or d.status <> 'pending' or d.attempt_count <> p_attempt then
    return 'stale';
  end if;
  insert into app.webhook_delivery_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, response_status, error)
  values (p_organization_id, d.id, p_attempt, p_started_at, p_duration_ms, p_response_status, left(p_error, 500));
  if v_ok then
    update app.webhook_deliveries x set status = 'succeeded', status_reason = null, completed_at = now(), lease_until = null,
                                        next_attempt_at = null
     where x.organization_id = p_organization_id and x.id = d.id;
    update app.webhook_endpoints x set consecutive_failures = 0, failing_since = null
     where x.organization_id = p_organization_id and x.id = d.endpoint_id
       and (x.consecutive_failures <> 0 or x.failing_since is not null);
    return 'succeeded';
  end if;
  if p_retryable then
    v_next := now() + greatest(app_private.webhook_retry_delay(p_attempt, p_scale),
                               make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400) * p_scale));
  end if;
  -- The schedule's next step may overshoot the 72 hours: the last attempt is then at retry_until.
  if p_retryable and now() < d.retry_until then
    v_next := least(v_next, d.retry_until);
    update app.webhook_deliveries x set next_attempt_at = v_next, lease_until = null, status_reason = null
     where x.organization_id = p_organization_id and x.id = d.id;
    perform app_private.webhook_enqueue(p_organization_id, d.id, v_next);
    v_outcome := 'retrying';
  else
    update app.webhook_deliveries x
       set status = 'failed', completed_at = now(), lease_until = null, next_attempt_at = null,
           status_reason = case when p_retryable then 'retry_period_exhausted' else 'permanent_failure' end
     where x.organization_id = p_organization_id and x.id = d.id;
    v_outcome := 'failed';
  end if;
  update app.webhook_endpoints x
     set consecutive_failures = x.consecutive_failures + 1, failing_since = coalesce(x.failing_since, v_now)
   where x.organization_id = p_organization_id and x.id = d.endpoint_id
  returning * into w;
  if w.status = 'enabled' and w.consecutive_failures >= p_disable_after
     and w.failing_since <= now() - make_interval(secs => p_disable_after_seconds) then
    update app.webhook_endpoints x set status = 'disabled', disabled_reason = 'delivery_failures'
     where x.organization_id = p_organization_id and x.id = w.id;
    insert into app_private.admin_notifications (organization_id, kind, subject_id, detail)
    values (p_organization_id, 'webhook_endpoint_disabled', w.id,
            format('webhook endpoint %s of client %s was disabled after %s consecutive failed deliveries since %s',
                   w.id, w.client_id, w.consecutive_failures, w.failing_since));
    v_outcome := v_outcome || ',endpoint_disabled';
  end if;
  return v_outcome;
end
$$;
