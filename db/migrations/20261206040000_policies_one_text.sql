-- migrate:up

/** One text for every row policy, on one server and on a Citus cluster.
 *
 * A policy reads the request's context through its accessors as scalar subqueries,
 * `(select app.current_organization_id())`: PostgreSQL evaluates each once per statement (an
 * InitPlan), where a direct call runs again for every row a filter sees and at every rescan of an
 * index scan (the context's signature is checked each time). Citus 13.2.2 refuses any sublink in a
 * policy of a distributed table; the baseline therefore gave the cluster copies of 74 policies with
 * direct calls. Citus as this project builds it (scripts/citus/install.sh,
 * policy-scalar-sublink.patch) takes a scalar subquery that reads no relation and names no column of
 * the row, which means on a shard what it means on the table; a sublink that reads a table is still
 * refused. So every policy now has the one text below on both targets: the 74 that the cluster held
 * as copies, and the 51 written since the baseline with direct calls (the commands' "Commands act
 * in the request's organization", the gate's, the worker's), whose accessors now run once per
 * statement inside the commands too. The job queue's policy is graphile-worker's table's and is
 * made by app_private.job_queue_privileges() once graphile-worker has migrated. A call that takes a column of the row (a
 * file's linked type, a connection's category) stays a call. The regex rewrite of policies for the
 * cluster, app_private.policy_expression, goes. */
set local lock_timeout = '3s';
set local statement_timeout = '120s';
-- Citus changes each table's shards over one connection per worker (a policy change on many
-- tables in one transaction).
select set_config('citus.multi_shard_modify_mode', 'sequential', true) where exists (select from pg_extension where extname = 'citus');

alter policy "Commands act in the request's organization" on app_private.admin_notifications
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their organization's publications" on app.agent_publications
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.agent_publications
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see only themselves" on app.api_clients
  using (((id = (select app.current_client_id())) and (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.api_clients
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see approvals of resources their Roles cover" on app.approvals
  using (((organization_id = (select app.current_organization_id())) and
case category
    when 'project'::text then (select app.has_role('manager'::text))
    when 'financial'::text then (select app.has_role('finance'::text))
    else (select app.has_role('hr'::text))
end));
alter policy "Commands act in the request's organization" on app.approvals
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients write to their own conversations" on app.conversation_messages
  with check (((organization_id = (select app.current_organization_id())) and (role = 'user'::text) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.conversation_messages
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Messages are readable with their conversation" on app.conversation_messages
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients change their own conversations" on app.conversations
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))))
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients see their own conversations" on app.conversations
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients start conversations" on app.conversations
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.conversations
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions
  using (((organization_id = (select app.current_organization_id())) and (readable_roles && (select app.current_roles()))));
alter policy "Commands act in the request's organization" on app.custom_field_definitions
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see customers of their organization" on app.customers
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.customers
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.events
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Events are visible through the client's deliveries" on app.events
  using (((organization_id = (select app.current_organization_id())) and ((select app.current_client_id()) = any (client_ids))));
alter policy "Chunks are readable where their file is" on app.file_chunks
  using (((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end));
alter policy "Clients write the bytes of their own pending uploads" on app.file_chunks
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.file_chunks
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.file_contents
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "File content is readable where the file is" on app.file_contents
  using (((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end));
alter policy "Clients read their organization's file policy" on app.file_policies
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.file_policies
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients move their own uploads on" on app.file_uploads
  using (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id()))))
  with check (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id()))));
alter policy "Clients see their own uploads" on app.file_uploads
  using (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.file_uploads
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "The gate reads uploads a link names" on app.file_uploads
  using (((organization_id = current_setting('svc.gate_organization'::text, true)) or (organization_id = (select app.current_organization_id()))));
alter policy "Writers of the linked resource start uploads" on app.file_uploads
  with check (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())) and app.has_any_role(app_private.file_write_roles(linked_resource_type))));
alter policy "Commands act in the request's organization" on app.files
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Files are visible where the linked resource is" on app.files
  using (((organization_id = (select app.current_organization_id())) and
case linked_resource_type
    when 'invoice'::text then (select app.has_any_role('{manager,finance}'::text[]))
    when 'ticket'::text then (select app_private.may_read_tickets())
    else (select app.has_any_role('{member,manager}'::text[]))
end));
alter policy "The gate reads files a link opened" on app.files
  using ((organization_id = (select app.current_organization_id())));
alter policy "Writers of the linked resource add uploaded files" on app.files
  with check (((organization_id = (select app.current_organization_id())) and (upload_id is not null) and app.has_any_role(app_private.file_write_roles(linked_resource_type))));
alter policy "Writers of the linked resource change files" on app.files
  using (((organization_id = (select app.current_organization_id())) and app.has_any_role(app_private.file_write_roles(linked_resource_type))))
  with check ((organization_id = (select app.current_organization_id())));
alter policy "Clients use only their own idempotency keys" on app.idempotency_keys
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))))
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.idempotency_keys
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see organization connections relevant to their Roles" on app.integration_connections
  using (((organization_id = (select app.current_organization_id())) and (ownership = 'organization'::text) and app_private.integration_visible(category)));
alter policy "Commands act in the request's organization" on app.integration_connections
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.invoice_lines
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers and finance delete draft lines" on app.invoice_lines
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Managers and finance read lines" on app.invoice_lines
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Managers and finance write lines" on app.invoice_lines
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Commands act in the request's organization" on app_private.invoice_number_counters
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.invoices
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers and finance change invoices" on app.invoices
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))))
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Managers and finance read invoices" on app.invoices
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Managers and finance write invoices" on app.invoices
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Commands act in the request's organization" on app_private.job_outbox
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients with any Role see members of their organization" on app.members
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[]))));
alter policy "Commands act in the request's organization" on app.members
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their organization's object schemas" on app.object_schemas
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.object_schemas
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their own organization" on app.organizations
  using ((id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.organizations
  using (((select app_private.operator_session()) or (id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.payments
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers and finance read payments" on app.payments
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Managers and finance record payments" on app.payments
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,finance}'::text[]))));
alter policy "Clients with any Role see projects of their organization" on app.projects
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[]))));
alter policy "Commands act in the request's organization" on app.projects
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers create projects" on app.projects
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Managers update projects" on app.projects
  using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))))
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Commands act in the request's organization" on app.report_results
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Results are readable with their run" on app.report_results
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients request report runs" on app.report_runs
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients see their own report runs" on app.report_runs
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.report_runs
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "The gate reads report runs a link opened" on app.report_runs
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.run_events
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Events are readable with their run" on app.run_events
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.run_tool_calls
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Tool calls are readable with their run" on app.run_tool_calls
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients answer and cancel their own runs" on app.runs
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))))
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients see their own runs" on app.runs
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients start runs" on app.runs
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.runs
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see task activity of their organization" on app.task_activity
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager}'::text[]))));
alter policy "Commands act in the request's organization" on app.task_activity
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers record task activity" on app.task_activity
  with check (((organization_id = (select app.current_organization_id())) and (actor_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text))));
alter policy "Clients see dependencies in their organization" on app.task_dependencies
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_dependencies
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers change dependencies" on app.task_dependencies
  using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))))
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Clients see notes in their organization" on app.task_notes
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager}'::text[]))));
alter policy "Commands act in the request's organization" on app.task_notes
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers, or members where the task policy permits, add notes" on app.task_notes
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{manager,member}'::text[])) and (author_client_id = (select app.current_client_id()))));
alter policy "Clients see their organization's workflows" on app.task_workflow_statuses
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflow_statuses
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their organization's workflows" on app.task_workflow_transitions
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflow_transitions
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their organization's workflows" on app.task_workflows
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflows
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients with any Role see tasks of their organization" on app.tasks
  using (((organization_id = (select app.current_organization_id())) and (select app.has_any_role('{member,manager,finance,hr}'::text[]))));
alter policy "Commands act in the request's organization" on app.tasks
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers create tasks" on app.tasks
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Managers update tasks" on app.tasks
  using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))))
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Commands act in the request's organization" on app.ticket_messages
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers add messages" on app.ticket_messages
  with check (((organization_id = (select app.current_organization_id())) and (author_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets())));
alter policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages
  using (((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets()) and ((type = 'reply'::text) or (select app_private.may_read_internal_notes()))));
alter policy "Commands act in the request's organization" on app_private.ticket_number_counters
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.ticket_search
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Search follows the tickets" on app.ticket_search
  using (((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets())));
alter policy "Clients see their organization's ticket workflow" on app.ticket_statuses
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_statuses
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see their organization's ticket transitions" on app.ticket_transitions
  using ((organization_id = (select app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_transitions
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Commands act in the request's organization" on app.tickets
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers change tickets" on app.tickets
  using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets())))
  with check ((organization_id = (select app.current_organization_id())));
alter policy "Managers create tickets" on app.tickets
  with check (((organization_id = (select app.current_organization_id())) and (created_by_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text)) and (select app_private.may_read_tickets())));
alter policy "Ticket readers see their organization's tickets" on app.tickets
  using (((organization_id = (select app.current_organization_id())) and (select app_private.may_read_tickets())));
alter policy "Commands act in the request's organization" on app.time_entries
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers change time" on app.time_entries
  using (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))))
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text))));
alter policy "Managers record time" on app.time_entries
  with check (((organization_id = (select app.current_organization_id())) and (select app.has_role('manager'::text)) and (created_by_client_id = (select app.current_client_id()))));
alter policy "Managers, finance, and hr where permitted read time entries" on app.time_entries
  using (((organization_id = (select app.current_organization_id())) and (select app_private.may_read_time_entries())));
alter policy "Commands act in the request's organization" on app.time_entry_audit
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Managers write the time audit" on app.time_entry_audit
  with check (((organization_id = (select app.current_organization_id())) and (actor_client_id = (select app.current_client_id())) and (select app.has_role('manager'::text))));
alter policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.webhook_deliveries
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.webhook_delivery_attempts
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));
alter policy "Clients change their own endpoints" on app.webhook_endpoints
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))))
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients create their own endpoints" on app.webhook_endpoints
  with check (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Clients see their own endpoints" on app.webhook_endpoints
  using (((organization_id = (select app.current_organization_id())) and (client_id = (select app.current_client_id()))));
alter policy "Commands act in the request's organization" on app.webhook_endpoints
  using (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))))
  with check (((select app_private.operator_session()) or (organization_id = (select app.current_organization_id()))));

drop function app_private.policy_expression(text);

-- migrate:down
set local lock_timeout = '3s';
set local statement_timeout = '120s';
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION',
      'on a cluster the policies before this migration were copies rewritten for Citus: restore a backup to go back');
  end if;
end
$$;

alter policy "Commands act in the request's organization" on app_private.admin_notifications
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.agent_publications
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.api_clients
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.approvals
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.conversation_messages
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.conversations
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.custom_field_definitions
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.customers
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.events
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.file_chunks
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.file_contents
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.file_policies
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.file_uploads
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "The gate reads uploads a link names" on app.file_uploads
  using (((organization_id = current_setting('svc.gate_organization'::text, true)) or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.files
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "The gate reads files a link opened" on app.files
  using ((organization_id = app.current_organization_id()));
alter policy "Commands act in the request's organization" on app.idempotency_keys
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.integration_connections
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.invoice_lines
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app_private.invoice_number_counters
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.invoices
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app_private.job_outbox
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.members
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.object_schemas
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.organizations
  using ((app_private.operator_session() or (id = app.current_organization_id())))
  with check ((app_private.operator_session() or (id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.payments
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.projects
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.report_results
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.report_runs
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "The gate reads report runs a link opened" on app.report_runs
  using ((organization_id = app.current_organization_id()));
alter policy "Commands act in the request's organization" on app.run_events
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.run_tool_calls
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.runs
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_activity
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_dependencies
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_notes
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflow_statuses
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflow_transitions
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.task_workflows
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.tasks
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_messages
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app_private.ticket_number_counters
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_search
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_statuses
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.ticket_transitions
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.tickets
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.time_entries
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.time_entry_audit
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.webhook_deliveries
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.webhook_delivery_attempts
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));
alter policy "Commands act in the request's organization" on app.webhook_endpoints
  using ((app_private.operator_session() or (organization_id = app.current_organization_id())))
  with check ((app_private.operator_session() or (organization_id = app.current_organization_id())));

create function app_private.policy_expression(p_expression text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_sublink constant text := '\(\s*select\s+((?:app|app_private)\.\w+\((?:[^()]|\([^()]*\))*\))(?:\s+as\s+\w+)?\s*\)';
  v_out text;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return p_expression;
  end if;
  v_out := regexp_replace(p_expression, v_sublink, '\1', 'gi');
  if v_out ~* '\m(select|exists)\M' then
    perform app_private.raise('SV500', 'CITUS_POLICY_SUBLINK', format('a policy keeps a sublink: %s', v_out));
  end if;
  return v_out;
end
$$;
revoke all on function app_private.policy_expression(text) from public;
