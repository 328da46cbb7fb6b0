-- migrate:up

/** Issue 37, step 3: every statement of a trigger names its organization.
 *
 * A trigger runs where its row is: on Citus, in the shard of the row's organization, where a
 * statement that looks rows up by id alone would ask every shard (Citus refuses a distributed query
 * from a shard). Each lookup below now names new.organization_id (or the row's), as the foreign
 * keys between these tables already pair it; on one server the same statements use the same
 * indexes (every key leads with organization_id). The helpers triggers call take the organization
 * too and are PL/pgSQL: Citus cannot plan a `language sql` function's statements with parameters. */

create or replace function app_private.tg_file_contents__check()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  f app.files;
begin
  if tg_op <> 'INSERT' then
    perform app_private.raise('SVC09', 'CONFLICT', 'stored file content never changes');
  end if;
  select * into f from app.files x where x.organization_id = new.organization_id and x.id = new.file_id;
  if f.size_bytes <> length(new.content) or f.sha256 <> encode(sha256(new.content), 'hex') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the content does not match the file''s size and checksum');
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_invoices__guard()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  if tg_op = 'DELETE' then
    if old.status <> 'draft' then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'issued invoices are never deleted');
    end if;
    return old;
  end if;
  new.scale := (select c.minor_units from app_private.currencies c where c.code = new.currency);
  if tg_op = 'INSERT' then
    -- Every invoice starts as a draft with nothing on it, whoever writes it; the API Client that
    -- creates it is the one in the request context, never a value it supplies.
    if new.status <> 'draft' or new.number is not null then
      perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'invoices are created as drafts', '/status');
    end if;
    new.subtotal := 0;
    new.tax_total := 0;
    new.total := 0;
    new.amount_paid := 0;
    new.sent_at := null;
    new.pdf_file_id := null;
    new.sync_connection_id := null;
    new.sync_status := null;
    new.sync_external_reference := null;
    new.sync_error := null;
    new.synced_at := null;
    new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  end if;
  if (tg_op = 'INSERT' or new.customer_id is distinct from old.customer_id)
     and not exists (select from app.customers c where c.organization_id = new.organization_id and c.id = new.customer_id and c.kind = 'billing') then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'customer_id must name a billing customer (cus_) of your organization', '/customer_id');
  end if;
  if tg_op = 'UPDATE' and old.status <> 'draft'
     and (new.customer_id, new.currency, new.issue_date, new.due_date, new.memo, new.subtotal, new.tax_total, new.total)
         is distinct from (old.customer_id, old.currency, old.issue_date, old.due_date, old.memo, old.subtotal, old.tax_total, old.total) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice cannot be changed', old.status));
  end if;
  if tg_op = 'UPDATE' and new.currency <> old.currency and exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', 'the currency of an invoice with lines cannot change', '/currency');
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_invoices__lifecycle()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  o app.organizations;
  c app.integration_connections;
  v_number bigint;
begin
  -- What issuing fixes stays fixed, whatever else the statement changes (a void or a payment too).
  if old.status <> 'draft' then
    if new.number is distinct from old.number or new.sent_at is distinct from old.sent_at then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its number and date');
    end if;
    if old.pdf_file_id is not null and new.pdf_file_id is distinct from old.pdf_file_id then
      perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'an issued invoice keeps its PDF');
    end if;
  elsif new.status = 'draft' and (new.number, new.sent_at, new.pdf_file_id, new.sync_status) is distinct from (null, null, null, null) then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', 'a draft has no number, PDF or sync; sending it makes them');
  end if;
  if new.status = old.status then
    return new;
  end if;
  if (old.status, new.status) not in (('draft', 'sent'), ('sent', 'paid'), ('sent', 'void')) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('an invoice does not go from %s to %s', old.status, new.status));
  end if;
  if new.status = 'void' and new.amount_paid > 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice with recorded payments cannot be voided');
  end if;
  if new.status = 'void' and old.sync_status = 'pending' then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      'the invoice is being synchronized to the accounting provider; void it once the sync has finished');
  end if;
  if new.status <> 'sent' then
    return new;
  end if;

  -- Issuing.
  if exists (select from app.customers x where x.organization_id = new.organization_id and x.id = new.customer_id and x.deleted_at is not null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('the customer %s was deleted; choose another customer', new.customer_id));
  end if;
  if not exists (select from app.invoice_lines l where l.organization_id = new.organization_id and l.invoice_id = new.id) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice without lines has nothing to bill; add lines first');
  end if;
  if new.total <= 0 then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', 'an invoice whose total is zero has nothing to bill');
  end if;
  select * into o from app.organizations x where x.id = new.organization_id;
  c := app_private.accounting_connection(new.organization_id);
  if o.invoices_require_accounting_connection and not app_private.accounting_ready(c) then
    perform app_private.accounting_not_ready(c, 'send invoices');
  end if;
  new.issue_date := coalesce(new.issue_date, (now() at time zone o.timezone)::date);
  new.due_date := coalesce(new.due_date, new.issue_date + o.invoice_payment_terms_days);
  if new.due_date < new.issue_date then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED',
      format('the due date %s is before the issue date %s; update the draft first', new.due_date, new.issue_date));
  end if;
  insert into app_private.invoice_number_counters as n (organization_id, last_number) values (new.organization_id, 1)
  on conflict (organization_id) do update set last_number = n.last_number + 1
  returning n.last_number into v_number;
  new.number := o.invoice_number_prefix || lpad(v_number::text, greatest(6, length(v_number::text)), '0');
  new.sent_at := now();
  if app_private.accounting_ready(c) then
    new.sync_connection_id := c.id;
    new.sync_status := 'pending';
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_invoices__pdf_required()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  if exists (select from app.invoices x where x.organization_id = new.organization_id and x.id = new.id and x.status <> 'draft' and x.pdf_file_id is null) then
    perform app_private.raise('SVC09', 'WORKFLOW_BLOCKED', format('%s cannot be issued without its PDF; sendInvoice makes it', new.id));
  end if;
  return null;
end
$function$
;
create or replace function app_private.tg_payments__apply()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  i app.invoices;
begin
  new.created_by_client_id := coalesce(app.current_client_id(), new.created_by_client_id);
  -- By id and organization: another organization's invoice is simply not there (no amount, currency
  -- or status leaks through the errors below).
  select * into i from app.invoices where id = new.invoice_id and organization_id = new.organization_id for update;
  if not found then
    perform app_private.invoice_not_found(new.invoice_id);
  end if;
  if i.status not in ('sent', 'paid') then
    perform app_private.raise('SVC09', 'INVOICE_NOT_EDITABLE', format('a %s invoice takes no payments', i.status));
  end if;
  if new.currency <> i.currency then
    perform app_private.raise('SVV22', 'CURRENCY_MISMATCH', format('the invoice is in %s', i.currency), '/currency');
  end if;
  if scale(new.amount) > i.scale then
    perform app_private.raise('SVV22', 'VALIDATION_FAILED', format('amount has more decimals than %s has minor units (%s)', i.currency, i.scale), '/amount');
  end if;
  if new.amount > i.total - i.amount_paid then
    perform app_private.raise('SVV22', 'PAYMENT_EXCEEDS_AMOUNT_DUE',
      format('the amount due is %s %s', app_private.money_text(i.total - i.amount_paid, i.scale), i.currency), '/amount');
  end if;
  update app.invoices
     set amount_paid = amount_paid + new.amount,
         status = case when amount_paid + new.amount = total then 'paid' else status end
   where organization_id = i.organization_id and id = i.id;
  return new;
end
$function$
;
create or replace function app_private.tg_task_dependencies__no_cycle()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_task app.tasks;
  v_pred app.tasks;
begin
  -- Serialize dependency changes per organization: two concurrent inserts could otherwise
  -- each pass the check and close a cycle together.
  perform pg_advisory_xact_lock(hashtextextended('svc.task_dependencies:' || new.organization_id, 0));
  -- The check below must see dependencies committed while we waited for the lock: only a
  -- statement snapshot (read committed) does.
  if current_setting('transaction_isolation') <> 'read committed' then
    perform app_private.raise('SVC09', 'CONFLICT', 'dependencies change only in read committed transactions');
  end if;
  select * into v_task from app.tasks where organization_id = new.organization_id and id = new.task_id;
  select * into v_pred from app.tasks where organization_id = new.organization_id and id = new.predecessor_task_id;
  if v_pred.id is null or v_pred.organization_id <> new.organization_id or v_task.organization_id <> new.organization_id then
    perform app_private.raise('SVN04', 'TASK_NOT_FOUND', format('no task %s in your organization', new.predecessor_task_id));
  end if;
  if v_pred.project_id <> v_task.project_id and not (select allow_cross_project_dependencies from app.task_workflows w
                                                       where w.organization_id = new.organization_id and w.id = v_task.workflow_id) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s is in another project and the workflow does not allow cross-project dependencies', v_pred.id));
  end if;
  if exists (
    with recursive upstream(id) as (
      select d.predecessor_task_id from app.task_dependencies d
       where d.organization_id = new.organization_id and d.task_id = new.predecessor_task_id
      union
      select d.predecessor_task_id from app.task_dependencies d join upstream u on d.task_id = u.id
       where d.organization_id = new.organization_id
    )
    select from upstream where id = new.task_id
  ) then
    perform app_private.raise('SVV24', 'DEPENDENCY_CYCLE',
      format('%s already depends, directly or indirectly, on %s', new.predecessor_task_id, new.task_id));
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_tasks__archive_rules()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_blockers text[];
  v_project_active boolean;
begin
  select p.status = 'active' into v_project_active from app.projects p where p.organization_id = new.organization_id and p.id = new.project_id;
  if new.archived_at is not null and old.archived_at is null then
    new.archived_at := now();
    v_blockers := app_private.task_archive_blockers(new.organization_id, new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'open tasks depend on this task: ' || array_to_string(v_blockers, ', '));
    end if;
    return new;
  end if;
  if not v_project_active then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED',
      case when new.archived_at is null and old.archived_at is not null
           then 'the task''s project is archived: restore the project first'
           else 'the task''s project is archived: restore the project before changing its tasks' end);
  end if;
  if old.archived_at is not null and new.archived_at is not null then
    perform app_private.raise('SVC16', 'TASK_ARCHIVE_BLOCKED', 'the task is archived: restore it before changing it');
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_tasks__legal_transition()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
declare
  v_category text;
begin
  if tg_op = 'INSERT' then
    if not exists (select from app.task_workflow_statuses s
                    where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status
                    and s.is_initial) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('a new task starts in its workflow''s initial status, not %s', new.status));
    end if;
    new.completed_at := null;
  elsif new.status <> old.status then
    if not exists (select from app.task_workflow_transitions t
                    where t.organization_id = new.organization_id and t.workflow_id = new.workflow_id
                      and t.from_status = old.status and t.to_status = new.status) then
      perform app_private.raise('SVV23', 'INVALID_TRANSITION', format('no transition leads from %s to %s', old.status, new.status));
    end if;
    -- completed_at belongs to done statuses: set on completion (now unless given), cleared otherwise.
    select s.category into v_category from app.task_workflow_statuses s
     where s.organization_id = new.organization_id and s.workflow_id = new.workflow_id and s.status = new.status;
    new.completed_at := case when v_category = 'done' then coalesce(new.completed_at, now()) end;
  elsif new.completed_at is distinct from old.completed_at then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'completed_at changes only with a transition into a done status');
  end if;
  if tg_op = 'UPDATE' and new.workflow_id <> old.workflow_id then
    perform app_private.raise('SVV23', 'INVALID_TRANSITION', 'a task cannot change workflow');
  end if;
  return new;
end
$function$
;
create or replace function app_private.tg_time_entries__submitted_has_approval()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  if new.status = 'submitted' and not exists (
       select from app.approvals a where a.organization_id = new.organization_id and a.resource_type = 'time_entry'
                                      and a.resource_id = new.id and a.status = 'pending') then
    perform app_private.raise('SVR05', 'APPROVAL_REQUIRED', 'submit the time entry through submitTimeEntry, which requests approval');
  end if;
  return null;
end
$function$
;
create or replace function app_private.tg_webhook_endpoints__limit()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog'
AS $function$
begin
  -- Serialize creations per client so two concurrent ones cannot both pass the count.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.client_id, 0));
  if (select count(*) from app.webhook_endpoints w where w.organization_id = new.organization_id and w.client_id = new.client_id) >= 20 then
    perform app_private.raise('SVC09', 'CONFLICT', 'a client can have at most 20 webhook endpoints; disable and reuse one');
  end if;
  return new;
end
$function$
;

/** Invoice totals after a statement on lines: each invoice with its organization. */
drop function app_private.invoice_recompute_totals(text[]);
create function app_private.invoice_recompute_totals(p_orgs text[], p_invoices text[]) returns void
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
begin
  -- One invoice at a time (a statement usually touches one): each is two index lookups, where a
  -- set-based join over unnest() is planned for 100 ids and scans every line.
  for n in 1 .. coalesce(cardinality(p_invoices), 0) loop
    update app.invoices i
       set subtotal = t.subtotal, tax_total = t.tax_total, total = t.subtotal + t.tax_total
      from (select coalesce(sum(l.amount), 0) as subtotal, coalesce(sum(l.tax_amount), 0) as tax_total
              from app.invoice_lines l where l.organization_id = p_orgs[n] and l.invoice_id = p_invoices[n]) t
     where i.organization_id = p_orgs[n] and i.id = p_invoices[n]
       and (i.subtotal, i.tax_total, i.total) is distinct from (t.subtotal, t.tax_total, t.subtotal + t.tax_total);
  end loop;
end
$$;
revoke execute on function app_private.invoice_recompute_totals(text[], text[]) from public;

create or replace function app_private.tg_invoice_lines__totals_changed() returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog
as $$
declare
  v_orgs text[];
  v_invoices text[];
begin
  -- Each branch names its own trigger's transition tables (a branch is planned only when it runs).
  if tg_op = 'INSERT' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct n.organization_id, n.invoice_id from inserted_lines n) x;
  elsif tg_op = 'DELETE' then
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select distinct o.organization_id, o.invoice_id from deleted_lines o) x;
  else
    select array_agg(x.organization_id), array_agg(x.invoice_id) into v_orgs, v_invoices
      from (select o.organization_id, o.invoice_id from old_lines o union select n.organization_id, n.invoice_id from new_lines n) x;
  end if;
  perform app_private.invoice_recompute_totals(v_orgs, v_invoices);
  return null;
end
$$;

/** What blocks archiving a project (open tasks, time awaiting approval), within its organization. */
drop function app_private.project_archive_blockers(text);
create function app_private.project_archive_blockers(p_org text, p_project_id text) returns text[]
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  v_open integer;
  v_pending integer;
  v_blockers text[] := array[]::text[];
begin
  select count(*) into v_open
    from app.tasks t
    join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
   where t.organization_id = p_org and t.project_id = p_project_id and t.archived_at is null and s.category = 'open';
  if v_open > 0 then
    v_blockers := v_blockers || format('%s open task(s): complete, cancel or archive them first', v_open);
  end if;
  select count(*) into v_pending from app.time_entries e
   where e.organization_id = p_org and e.project_id = p_project_id and e.status = 'submitted' and e.deleted_at is null;
  if v_pending > 0 then
    v_blockers := v_blockers || format('%s time entr(ies) awaiting approval', v_pending);
  end if;
  return v_blockers;
end
$$;
revoke execute on function app_private.project_archive_blockers(text, text) from public;
-- The projects trigger runs as the writer (svc_api in a request).
grant execute on function app_private.project_archive_blockers(text, text) to svc_api;

create or replace function app_private.tg_projects__status_change() returns trigger
language plpgsql volatile
set search_path = pg_catalog
as $$
declare
  v_blockers text[];
begin
  if new.status = old.status then
    return new;
  end if;
  if new.status = 'archived' then
    v_blockers := app_private.project_archive_blockers(new.organization_id, new.id);
    if cardinality(v_blockers) > 0 then
      perform app_private.raise('SVC15', 'PROJECT_ARCHIVE_BLOCKED',
        'the project has active work: ' || array_to_string(v_blockers, '; '));
    end if;
    new.archived_at := now();
  else
    new.archived_at := null;
  end if;
  return new;
end
$$;

/** An organization's file policy (the defaults where it set none). */
create or replace function app_private.file_policy(p_org text, out max_size_bytes bigint, out allowed_content_types text[],
  out require_scan boolean)
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  select coalesce(p.max_size_bytes, 104857600), coalesce(p.allowed_content_types, app_private.default_file_content_types()),
         coalesce(p.require_scan, false)
    into max_size_bytes, allowed_content_types, require_scan
    from (select 1) one left join app.file_policies p on p.organization_id = p_org;
end
$$;

/** The open tasks that depend on a task (they block archiving it), within its organization. */
drop function app_private.task_archive_blockers(text);
create function app_private.task_archive_blockers(p_org text, p_task_id text) returns text[]
language plpgsql stable security definer
set search_path = pg_catalog
as $$
begin
  return (select coalesce(array_agg(t.id order by t.id), array[]::text[])
            from app.task_dependencies d
            join app.tasks t on t.organization_id = d.organization_id and t.id = d.task_id
            join app.task_workflow_statuses s on s.organization_id = t.organization_id and s.workflow_id = t.workflow_id and s.status = t.status
           where d.organization_id = p_org and d.predecessor_task_id = p_task_id and t.archived_at is null and s.category = 'open');
end
$$;
revoke execute on function app_private.task_archive_blockers(text, text) from public;
grant execute on function app_private.task_archive_blockers(text, text) to svc_api;

create or replace function app_private.accounting_connection(p_org text) returns app.integration_connections
language plpgsql stable security definer
set search_path = pg_catalog
as $$
declare
  c app.integration_connections;
begin
  select x.* into c from app.integration_connections x
   where x.organization_id = p_org and x.ownership = 'organization' and x.category = 'accounting'
     and 'invoice.export' = any (x.capabilities)
   order by (x.status = 'connected' and x.action_required is null) desc, x.last_success_at desc nulls last, x.id
   limit 1;
  return c;
end
$$;

-- migrate:down
do $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', 'restore a backup taken before 20261205000400'); end $$;
