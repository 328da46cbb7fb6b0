// Response shapes, for the OpenAPI document (responses are built in SQL; these describe them).
import Joi from 'joi';

const role = Joi.string().valid('member', 'manager', 'finance', 'hr');
const timestamp = Joi.string().isoDate().description('ISO 8601 UTC date-time');

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
    hire_date: Joi.string().isoDate().allow(null).description('HR-restricted: hr only'),
    employment_type: Joi.string().valid('employee', 'contractor', 'intern').allow(null).description('HR-restricted: hr only'),
  }).label('Member'),

  project: Joi.object({
    object: Joi.string().valid('project').required(),
    id: Joi.string().pattern(/^prj_/).required(),
    code: Joi.string().required(),
    name: Joi.string().required(),
    description: Joi.string().allow(null).description('member, manager'),
    status: Joi.string().valid('active', 'archived').required(),
    start_date: Joi.string().isoDate().allow(null),
    end_date: Joi.string().isoDate().allow(null),
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
    work_date: Joi.string().isoDate().required(),
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
    errors: Joi.array().items(Joi.object({ pointer: Joi.string(), detail: Joi.string(), code: Joi.string() })),
  }).label('Problem'),
};
