// The webhook event catalogue, as published in the OpenAPI document (`webhooks`) and the docs.
// The database holds the same list in app_private.event_types (it validates subscriptions);
// test/db/events.test.ts keeps the two equal.
export interface EventType { name: string; resourceType: string; emittedBy: string[]; description: string; subscribable: boolean }

const e = (name: string, emittedBy: string[], description: string, subscribable = true,
  resourceType = name.slice(0, name.lastIndexOf('.'))): EventType => ({ name, resourceType, emittedBy, description, subscribable });

export const EVENT_TYPES: EventType[] = [
  e('project.created', ['createProject'], 'A project was created.'),
  e('project.updated', ['updateProject'], 'Fields of a project changed.'),
  e('project.archived', ['archiveProject'], 'A project was archived.'),
  e('project.restored', ['restoreProject'], 'An archived project was restored.'),
  e('task.created', ['createTask'], 'A task was created.'),
  e('task.updated', ['updateTask'], 'Fields of a task changed.'),
  e('task.transitioned', ['transitionTask'], 'A task moved to another workflow status.'),
  e('task.archived', ['archiveTask'], 'A task was archived.'),
  e('task.restored', ['restoreTask'], 'An archived task was restored.'),
  e('time_entry.created', ['createTimeEntry', 'createTimeEntryBatch'], 'A time entry was recorded.'),
  e('time_entry.updated', ['updateTimeEntry'], 'Fields of a time entry changed.'),
  e('time_entry.submitted', ['submitTimeEntry'], 'A time entry was submitted for approval.'),
  e('time_entry.approved', [], 'A named user approved a time entry (control plane).'),
  e('time_entry.rejected', [], 'A named user rejected a time entry (control plane).'),
  e('time_entry.deleted', ['deleteTimeEntry'], 'A time entry was deleted.'),
  e('approval.created', ['submitTimeEntry'], 'An approval was requested; fetch it before acting.'),
  e('approval.updated', ['submitTimeEntry'], 'An approval changed (resubmitted or decided); fetch it before acting.'),
  e('invoice.created', ['createInvoice'], 'A draft invoice was created.'),
  e('invoice.updated', ['updateInvoice', 'replaceInvoiceLines', 'createPayment'], 'A draft changed, a partial payment lowered the amount due, or the accounting sync status changed.'),
  e('invoice.sent', ['sendInvoice'], 'An invoice was issued: numbered, its PDF stored and (when asked) emailed.'),
  e('invoice.paid', ['createPayment'], 'Recorded payments settled an invoice.'),
  e('invoice.voided', ['voidInvoice'], 'An issued invoice was voided (it is kept).'),
  e('payment.created', ['createPayment'], 'A payment received outside the service was recorded.'),
  e('ticket.created', ['createTicket'], 'A ticket was created.'),
  e('ticket.updated', ['updateTicket'], 'Fields of a ticket changed (subject, description, priority, tags, assignee, project).'),
  e('ticket.transitioned', ['transitionTicket'], 'A ticket moved to another workflow status.'),
  e('ticket.message.created', ['createTicketMessage'], 'A reply or an internal note was added to a ticket (internal notes reach only subscribers whose Roles read them).', true, 'ticket_message'),
  e('report_run.succeeded', ['createReportRun'], 'A report run finished; its results can be read until expires_at.', true, 'report_run'),
  e('report_run.failed', ['createReportRun'], 'A report run failed (the run shows why).', true, 'report_run'),
  e('run.completed', ['createAgentRun', 'submitRunAction'], 'A run succeeded; its output is on the run (GET /v1/runs/{id}).'),
  e('run.failed', ['createAgentRun', 'submitRunAction'], 'A run failed; the run\'s error says why.'),
  e('run.requires_action', ['createAgentRun', 'submitRunAction'], 'A run waits for your choice (submitRunAction).'),
  e('run.cancelled', ['cancelRun'], 'A run was cancelled; it lists the tool operations that completed.'),
  e('conversation.message.created', ['createConversationMessage'], 'A message was added to one of your conversations: yours, or the assistant\'s reply when its run ended.', true, 'conversation_message'),
  e('file.ready', ['completeFileUpload'], 'An uploaded file passed its checks and can be downloaded.'),
  e('file.rejected', ['completeFileUpload'], 'An uploaded file failed its checks (the file shows why); it cannot be downloaded.'),
  e('file.archived', ['archiveFile'], 'A file was archived.'),
  e('integration_connection.updated', [], 'A connection changed (status, capabilities, action required) through the control plane.'),
  e('webhook_endpoint.test', ['testWebhookEndpoint'], 'A signed test event for one endpoint.', false),
];

export const SUBSCRIBABLE_EVENTS = EVENT_TYPES.filter((t) => t.subscribable).map((t) => t.name);
