-- migrate:up

/** Review of issues 17 and 18.
 * A skill's Roles are any-of, as an operation's are (the spec's Role matrix: tasks are read by
 * member or manager, so a Manager-only client may triage); the agent's own Roles stay all-of. */
update app_private.agent_skills set required_roles = '{member,manager}' where name = 'tasks.find_attention';
comment on column app_private.agent_skills.required_roles is 'one of these Roles is needed (as for an operation)';

create or replace function app_private.skill_blocker(p_skill text, p_subject_member_id text) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  k app_private.agent_skills;
  v_level text;
  v_ready jsonb;
begin
  select * into k from app_private.agent_skills x where x.name = p_skill;
  select c.license_level into v_level from app.api_clients c where c.id = app.current_client_id();
  if k.license_level = 'manager' and v_level is distinct from 'manager' then
    return jsonb_build_object('code', 'LICENSE_LEVEL_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs a Manager-level license', p_skill));
  end if;
  if not (k.required_roles && app.current_roles()) then
    return jsonb_build_object('code', 'ROLE_REQUIRED', 'skill', p_skill,
      'message', format('the skill %s needs one of the Roles %s', p_skill, array_to_string(k.required_roles, ', ')));
  end if;
  if p_subject_member_id is not null and k.subject_dependent and not k.supports_subject then
    return jsonb_build_object('code', 'SUBJECT_NOT_SUPPORTED', 'skill', p_skill,
      'message', format('the skill %s does not act for a subject', p_skill));
  end if;
  if k.capability is not null then
    v_ready := api.integration_readiness(k.capability);
    if not (v_ready ->> 'ready')::boolean then
      return jsonb_build_object('code', 'INTEGRATION_CONNECTION_NOT_READY', 'skill', p_skill,
        'message', format('the skill %s needs a ready organization connection offering %s: %s', p_skill, k.capability,
                          v_ready -> 'blockers' -> 0 ->> 'message'));
    end if;
  end if;
  return null;
end
$$;


/** cancelRun gives the lock 1 s, then restores the transaction's own lock_timeout (it had set 0). */
create or replace function api.run_cancel(p_id text) returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  r app.runs;
  v_lock_timeout text := current_setting('lock_timeout');
begin
  if not exists (select from api.runs v where v.id = p_id) then
    perform app_private.raise('SVN04', 'RUN_NOT_FOUND', format('no run %s of your client', p_id));
  end if;
  perform set_config('lock_timeout', '1s', true);
  begin
    r := app_private.run_lock(p_id);
  exception when lock_not_available then
    perform app_private.raise('SVC09', 'RUN_CANCEL_NOT_AVAILABLE', 'the run is applying a tool operation; retry the cancel in a moment');
  end;
  perform set_config('lock_timeout', v_lock_timeout, true);
  if r.status in ('succeeded', 'failed', 'cancelled') then
    perform app_private.raise('SVC09', 'RUN_ALREADY_TERMINAL', format('the run is already %s', r.status));
  end if;
  update app.runs x set status = 'cancelled', required_action = null, completed_at = now()
   where x.organization_id = r.organization_id and x.id = p_id;
  return (select v.doc from api.runs v where v.id = p_id);
end
$$;

-- migrate:down

update app_private.agent_skills set required_roles = '{member}' where name = 'tasks.find_attention';
