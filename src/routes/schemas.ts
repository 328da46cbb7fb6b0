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
