// Response shapes, for the OpenAPI document (responses are built in SQL; these describe them).
import Joi from 'joi';

const role = Joi.string().valid('member', 'manager', 'finance', 'hr');
const timestamp = Joi.string().isoDate().description('ISO 8601 UTC date-time');
/** A calendar date, YYYY-MM-DD (`format: date` in the document, not date-time). */
const date = Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/).meta({ format: 'date' }).description('ISO 8601 calendar date');

export const schemas = {
  principal: Joi.object({
    object: Joi.string().valid('api_client_principal').required(),
    id: Joi.string().pattern(/^apic_/).required(),
    name: Joi.string().required(),
    organization_id: Joi.string().pattern(/^org_/).required(),
    license: Joi.object({
      level: Joi.string().valid('regular', 'manager').required(),
      source: Joi.string().valid('included', 'purchased').required(),
      status: Joi.string().valid('active').required(),
    }).required(),
    svc_roles: Joi.array().items(role).required(),
    record_access: Joi.string().valid('organization_wide_by_role').required(),
    scope: Joi.string().valid('svc.api').required(),
  }).label('ApiClientPrincipal'),

  organization: Joi.object({
    object: Joi.string().valid('organization').required(),
    id: Joi.string().pattern(/^org_/).required(),
    name: Joi.string().required(),
    status: Joi.string().valid('active', 'restricted', 'suspended').required(),
    timezone: Joi.string().required().description('IANA time-zone identifier'),
    currency: Joi.string().length(3).required().description('ISO 4217'),
    locale: Joi.string().required().description('BCP 47'),
    created_at: timestamp.required(),
    links: Joi.object({ web: Joi.string().uri().required() }).required(),
  }).label('Organization'),

  member: Joi.object({
    object: Joi.string().valid('member').required(),
    id: Joi.string().email().required().description('normalized email'),
    display_name: Joi.string().required(),
    email: Joi.string().email().required(),
    status: Joi.string().valid('active', 'inactive').required(),
    svc_roles: Joi.array().items(role).description('member, manager, hr only'),
    job_title: Joi.string().allow(null).description('member, manager, hr only'),
    timezone: Joi.string().allow(null).description('member, manager, hr only'),
    employee_number: Joi.string().allow(null).description('HR-restricted: hr only'),
    hire_date: date.allow(null).description('HR-restricted: hr only'),
    employment_type: Joi.string().valid('employee', 'contractor', 'intern').allow(null).description('HR-restricted: hr only'),
  }).label('Member'),

  project: Joi.object({
    object: Joi.string().valid('project').required(),
    id: Joi.string().pattern(/^prj_/).required(),
    code: Joi.string().required(),
    name: Joi.string().required(),
    description: Joi.string().allow(null).description('member, manager'),
    status: Joi.string().valid('active', 'archived').required(),
    start_date: date.allow(null),
    end_date: date.allow(null),
    customer_id: Joi.string().allow(null).description('member, manager, finance'),
    manager_member_id: Joi.string().allow(null).description('member, manager, hr'),
    currency: Joi.string().length(3).description('member, manager, finance'),
    custom_fields: Joi.object().unknown(true).required().description('fields readable with your Roles'),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('Project'),

  task: Joi.object({
    object: Joi.string().valid('task').required(),
    id: Joi.string().pattern(/^tsk_/).required(),
    project_id: Joi.string().pattern(/^prj_/).required(),
    code: Joi.string().allow(null),
    name: Joi.string().required(),
    description: Joi.string().allow(null),
    status: Joi.string().required().description('a status of the task\'s workflow: todo, in_progress, blocked, done, cancelled'),
    archived: Joi.boolean().required(),
    priority: Joi.string().valid('low', 'medium', 'high', 'urgent'),
    start_at: timestamp.allow(null),
    due_at: timestamp.allow(null),
    completed_at: timestamp.allow(null),
    assignee_member_ids: Joi.array().items(Joi.string()),
    predecessor_task_ids: Joi.array().items(Joi.string()),
    transitions: Joi.array().items(Joi.object({ name: Joi.string(), to_status: Joi.string() })).description('offered now'),
    custom_fields: Joi.object().unknown(true).required(),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('Task'),

  taskNote: Joi.object({
    object: Joi.string().valid('task_note').required(),
    id: Joi.string().required(),
    task_id: Joi.string().required(),
    text: Joi.string().required(),
    subject: Joi.object({ member_id: Joi.string() }).allow(null),
    author: Joi.object({ type: Joi.string().valid('api_client'), id: Joi.string() }).required(),
    created_at: timestamp.required(),
  }).label('TaskNote'),

  objectSchemaSummary: Joi.object({
    object: Joi.string().valid('object_schema_summary').required(),
    object_type: Joi.string().required(),
    label: Joi.string().required(),
    schema_version: Joi.number().integer().required(),
    custom_field_count: Joi.number().integer().required(),
  }).label('ObjectSchemaSummary'),

  objectSchema: Joi.object({
    object: Joi.string().valid('object_schema').required(),
    object_type: Joi.string().required(),
    label: Joi.string().required(),
    schema_version: Joi.number().integer().required(),
    fields: Joi.array().items(Joi.object({
      api_name: Joi.string(), label: Joi.string(),
      field_type: Joi.string().valid('text', 'number', 'date', 'boolean', 'select', 'multi_select', 'member'),
      custom_field: Joi.boolean(), required: Joi.boolean(), readable: Joi.boolean(), writable: Joi.boolean(),
      filterable: Joi.boolean(), sortable: Joi.boolean(), groupable: Joi.boolean(),
      options: Joi.array().items(Joi.object({ value: Joi.string(), label: Joi.string() })),
      validation: Joi.object().unknown(true), relationship_target: Joi.string().allow(null),
    })).required(),
  }).label('ObjectSchema'),

  timeEntry: Joi.object({
    object: Joi.string().valid('time_entry').required(),
    id: Joi.string().pattern(/^tim_/).required(),
    member_id: Joi.string().required().description('the subject member'),
    project_id: Joi.string().required(),
    task_id: Joi.string().allow(null),
    work_date: date.required(),
    minutes: Joi.number().integer().min(1).max(1440).required(),
    billable: Joi.boolean().required(),
    notes: Joi.string().allow(null),
    status: Joi.string().valid('draft', 'submitted', 'approved', 'rejected').required(),
    external_id: Joi.string().allow(null).description('shown only to the client that set it'),
    approval_id: Joi.string().allow(null),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('TimeEntry'),

  timeEntryBatch: Joi.object({
    object: Joi.string().valid('time_entry_batch').required(),
    atomic: Joi.boolean().required(),
    created: Joi.number().integer().required(),
    failed: Joi.number().integer().required(),
    results: Joi.array().items(Joi.object({
      index: Joi.number().integer().required(),
      status: Joi.string().valid('created', 'failed').required(),
      time_entry: Joi.object().unknown(true),
      error: Joi.object({ code: Joi.string(), errors: Joi.array() }),
    })).required(),
  }).label('TimeEntryBatch'),

  approval: Joi.object({
    object: Joi.string().valid('approval').required(),
    id: Joi.string().pattern(/^apr_/).required(),
    type: Joi.string().valid('time_entry').required(),
    status: Joi.string().valid('pending', 'approved', 'rejected').required(),
    resource: Joi.object({ type: Joi.string(), id: Joi.string() }).required(),
    requested_at: timestamp.required(),
    decided_at: timestamp.allow(null).required(),
    decision: Joi.string().valid('approved', 'rejected').allow(null).required(),
    version: Joi.number().integer().required(),
    updated_at: timestamp.required(),
    approver: Joi.object({ member_id: Joi.string() }).allow(null).description('only where the people-data policy permits'),
  }).label('Approval'),

  invoice: Joi.object({
    object: Joi.string().valid('invoice').required(),
    id: Joi.string().pattern(/^inv_/).required(),
    number: Joi.string().allow(null).required(),
    status: Joi.string().valid('draft', 'sent', 'paid', 'void').required(),
    customer_id: Joi.string().required(),
    issue_date: date.allow(null).required(),
    due_date: date.allow(null).required(),
    currency: Joi.string().required(),
    memo: Joi.string().allow(null, '').required(),
    lines: Joi.array().items(Joi.object({
      id: Joi.string().pattern(/^invl_/), description: Joi.string(), quantity: Joi.string(), unit_price: Joi.string(),
      tax_rate: Joi.string(), amount: Joi.string(), tax_amount: Joi.string(),
    })).required(),
    subtotal: Joi.string().required(),
    tax_total: Joi.string().required(),
    total: Joi.string().required(),
    amount_paid: Joi.string().required(),
    amount_due: Joi.string().required(),
    sent_at: timestamp.allow(null).required(),
    pdf_file_id: Joi.string().pattern(/^fil_/).allow(null).required().description('the PDF stored when the invoice was issued'),
    accounting_sync: Joi.object({
      status: Joi.string().valid('pending', 'synced', 'failed').required(),
      connection_id: Joi.string().pattern(/^icn_/).required(),
      external_reference: Joi.string().allow(null).required().description('the accounting provider\'s reference'),
      synced_at: timestamp.allow(null).required(),
      error: Joi.string().allow(null).required(),
    }).allow(null).required().description('present when the invoice is synchronized to an organization accounting connection'),
    version: Joi.number().integer().required(),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('Invoice'),

  integrationConnection: Joi.object({
    object: Joi.string().valid('integration_connection').required(),
    id: Joi.string().pattern(/^icn_/).required(),
    provider: Joi.string().required(),
    category: Joi.string().required(),
    ownership: Joi.string().valid('organization').required(),
    status: Joi.string().valid('connected', 'action_required', 'error', 'disconnected').required(),
    capabilities: Joi.array().items(Joi.string()).required(),
    last_success_at: timestamp.allow(null).required(),
    action_required: Joi.string().allow(null).required(),
    version: Joi.number().integer().required(),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('IntegrationConnection'),

  integrationReadiness: Joi.object({
    object: Joi.string().valid('integration_readiness').required(),
    capability: Joi.string().required(),
    resource: Joi.object({ type: Joi.string(), id: Joi.string() }).required(),
    ready: Joi.boolean().required(),
    connection_id: Joi.string().allow(null).required(),
    blockers: Joi.array().items(Joi.object({
      code: Joi.string().valid('INTEGRATION_CONNECTION_NOT_READY', 'CAPABILITY_NOT_AVAILABLE', 'PERSONAL_CONNECTION_NOT_ALLOWED', 'ROLE_REQUIRED'),
      message: Joi.string(),
    })).required(),
  }).label('IntegrationReadiness'),

  webhookEndpoint: Joi.object({
    object: Joi.string().valid('webhook_endpoint').required(),
    id: Joi.string().pattern(/^whe_/).required(),
    url: Joi.string().uri({ scheme: 'https' }).required(),
    events: Joi.array().items(Joi.string()).required(),
    description: Joi.string().allow(null).required(),
    status: Joi.string().valid('enabled', 'disabled').required(),
    disabled_reason: Joi.string().valid('client', 'delivery_failures').allow(null).required(),
    previous_secret_expires_at: timestamp.allow(null).required().description('while a rotated-out secret still signs'),
    secret: Joi.string().pattern(/^whsec_/).description('only in the responses of create and rotate-secret'),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
    version: Joi.number().integer().required(),
  }).label('WebhookEndpoint'),

  webhookDelivery: Joi.object({
    object: Joi.string().valid('webhook_delivery').required(),
    id: Joi.string().pattern(/^whd_/).required(),
    endpoint_id: Joi.string().required(),
    event: Joi.object({
      id: Joi.string().pattern(/^evt_/), type: Joi.string(), created_at: timestamp,
      data: Joi.object({ object: Joi.object({ type: Joi.string(), id: Joi.string(), version: Joi.number().integer() }) }),
    }).required(),
    status: Joi.string().valid('pending', 'succeeded', 'failed', 'cancelled').required(),
    status_reason: Joi.string().allow(null).required(),
    attempt_count: Joi.number().integer().required(),
    next_attempt_at: timestamp.allow(null).required(),
    replay_of: Joi.string().allow(null).required(),
    last_attempt: Joi.object().unknown(true).allow(null).required(),
    attempts: Joi.array().items(Joi.object({
      attempt: Joi.number().integer(), started_at: timestamp, duration_ms: Joi.number().integer(),
      response_status: Joi.number().integer().allow(null), error: Joi.string().allow(null),
    })).description('getWebhookDelivery only'),
    created_at: timestamp.required(),
    completed_at: timestamp.allow(null).required(),
  }).label('WebhookDelivery'),

  file: Joi.object({
    object: Joi.string().valid('file').required(),
    id: Joi.string().pattern(/^fil_/).required(),
    name: Joi.string().required(),
    content_type: Joi.string().required().description('media type, as declared and verified against the bytes'),
    size_bytes: Joi.number().integer().required(),
    sha256: Joi.string().pattern(/^[0-9a-f]{64}$/).required().description('hex SHA-256 of the content'),
    status: Joi.string().valid('processing', 'ready', 'rejected', 'archived').required()
      .description('processing while checks run; ready when it can be downloaded; rejected when a check failed (see rejection); archived'),
    linked_resource: Joi.object({ type: Joi.string().valid('project', 'task', 'invoice').required(), id: Joi.string().required() }).required(),
    scan: Joi.object({
      status: Joi.string().valid('pending', 'clean', 'infected', 'failed', 'not_scanned').required()
        .description('not_scanned: no virus scanner was configured (files the service made itself, such as invoice PDFs, are not scanned either)'),
      signature: Joi.string().allow(null).required().description('what the scanner found, when infected'),
    }).required(),
    rejection: Joi.object({ code: Joi.string().valid('FILE_SCAN_FAILED').required(), detail: Joi.string().required() }).allow(null).required(),
    retention: Joi.object({
      financial_record: Joi.boolean().required().description('a posted financial record (an issued invoice\'s PDF): kept, never archived'),
      legal_hold: Joi.boolean().required(),
    }).required(),
    archived_at: timestamp.allow(null).required(),
    created_at: timestamp.required(),
    updated_at: timestamp.required(),
  }).label('File'),

  fileUpload: Joi.object({
    object: Joi.string().valid('file_upload').required(),
    id: Joi.string().pattern(/^upl_/).required(),
    status: Joi.string().valid('pending', 'uploaded', 'completed').required(),
    upload_url: Joi.string().uri().required()
      .description('PUT the bytes here, with the headers below, before expires_at. A bearer capability: do not log or share it. Used once.'),
    method: Joi.string().valid('PUT').required(),
    headers: Joi.object({ 'Content-Type': Joi.string().required(), 'Content-Length': Joi.string().required() })
      .required().description('headers the PUT must carry'),
    expires_at: timestamp.required().description('the upload URL and the completion both expire then'),
    name: Joi.string().required(),
    content_type: Joi.string().required(),
    size_bytes: Joi.number().integer().required(),
    sha256: Joi.string().required(),
    linked_resource: Joi.object({ type: Joi.string().required(), id: Joi.string().required() }).required(),
    limits: Joi.object({
      max_size_bytes: Joi.number().integer().required(),
      allowed_content_types: Joi.array().items(Joi.string()).required(),
    }).required().description('the organization\'s file policy in force'),
    file_id: Joi.string().allow(null).required().description('the file, once completed'),
  }).label('FileUpload'),

  fileDownload: Joi.object({
    object: Joi.string().valid('file_download').required(),
    file_id: Joi.string().pattern(/^fil_/).required(),
    download_url: Joi.string().uri().required()
      .description('GET the bytes here before expires_at (Range requests resume a download). A bearer capability: do not log or share it.'),
    expires_at: timestamp.required(),
  }).label('FileDownload'),

  list: (item: Joi.ObjectSchema) => Joi.object({
    object: Joi.string().valid('list').required(),
    data: Joi.array().items(item).required(),
    has_more: Joi.boolean().required(),
    next_cursor: Joi.string().allow(null).required(),
  }),

  problem: Joi.object({
    type: Joi.string().uri().required(),
    title: Joi.string().required(),
    status: Joi.number().integer().required(),
    detail: Joi.string(),
    instance: Joi.string(),
    code: Joi.string().required().description("the spec's error code"),
    request_id: Joi.string().required(),
    errors: Joi.array().items(Joi.object({ pointer: Joi.string(), detail: Joi.string(), code: Joi.string() }))
      .description('every problem with the input, each with a JSON pointer'),
    current_etag: Joi.string().description('STALE_RESOURCE: the current ETag'),
    resource_id: Joi.string().description('the resource the problem is about, where one exists'),
  }).unknown(true).label('Problem').description('RFC 9457 problem details; further extension members may appear'),
};
