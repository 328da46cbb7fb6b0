// svc-admin: the control plane for administrators. Each command wraps one function of the
// `control` schema and prints exactly one JSON object on stdout; errors print one JSON object
// on stderr and exit non-zero (2: usage, 1: refused or failed). Reads DATABASE_URL (an owner
// connection, not svc_runtime). Commands and their flags are data, so parsing, validation and
// --help come from one description and cannot drift apart.
import { parseArgs } from 'node:util';
import { editDatabaseUrl } from '../db/url.ts';
import postgres from 'postgres';
import { newSigningKey } from '../auth/tokens.ts';
import { constraintNamed } from '../http/errors.ts';
import { masterKey } from '../config.ts';

type Flags = Record<string, string>;
type Sql = postgres.Sql;

class UsageError extends Error {}

/** How a value is checked. Every value stays a string: scripts pass booleans as `--required true`. */
type FlagKind = 'text' | 'list' | 'boolean' | 'integer';

export interface FlagSpec {
  name: string;
  description: string;
  kind?: FlagKind;
  required?: boolean;
  /** A fixed set of allowed values, checked before the database is reached. */
  values?: readonly string[];
  /** Placeholder of the value in help (NAME, ID, …); enums and booleans show their values. */
  value?: string;
}

export interface CommandSpec {
  summary: string;
  /** The keys of the JSON object printed on success, for help. */
  prints: string;
  flags: readonly FlagSpec[];
  /** `url`: the owner connection URL the command runs with. */
  run: (sql: Sql, f: Flags, url: string) => Promise<Record<string, unknown>>;
}

// Spelled as the database accepts them; the control plane is the only way in, so the sets live
// next to the constraints they mirror (db/migrations) and a refusal here saves a round trip.
const PLANS = ['trial', 'team', 'business', 'enterprise'] as const;
const ORG_STATUSES = ['active', 'restricted', 'suspended'] as const;
const MEMBER_STATUSES = ['active', 'inactive'] as const;
const EMPLOYMENT_TYPES = ['employee', 'contractor', 'intern'] as const;
const LICENSES = ['regular', 'manager'] as const;
const CUSTOMER_KINDS = ['company', 'billing'] as const;
const OBJECTS = ['project', 'task'] as const;
const FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'select', 'multi_select', 'member'] as const;
const DECISIONS = ['approved', 'rejected'] as const;
const OWNERSHIPS = ['organization', 'personal'] as const;
const CONNECTION_STATUSES = ['connected', 'action_required', 'error', 'disconnected'] as const;
// Accepted spellings of a boolean (as before); help shows true|false.
const TRUE = ['true', 'yes', '1'];
const BOOLEANS = [...TRUE, 'false', 'no', '0'];

const need = (f: Flags, name: string) => {
  // Declared required flags are checked before a command runs; this keeps the command bodies total.
  const v = f[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
};
const list = (v: string | undefined) => (v === undefined ? null : v.split(',').map((s) => s.trim()).filter(Boolean));
const opt = (f: Flags, name: string) => f[name] ?? null;
const bool = (f: Flags, name: string) => (f[name] === undefined ? null : TRUE.includes(f[name]!));

// Flags shared by several commands.
const ORG: FlagSpec = { name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' };
const CLIENT: FlagSpec = { name: 'client', value: 'ID', required: true, description: 'API Client id' };
const ROLES_HINT = 'comma-separated Roles among member, manager, finance, hr';
const TIMEZONE_HINT = 'IANA time-zone identifier, e.g. Europe/Berlin';

export const GROUPS: Record<string, string> = {
  org: 'Organizations: creation, status, plan and policies',
  member: 'Members (the people of an organization)',
  client: 'API Clients: Roles, secrets, licences and lifecycle',
  customer: 'Customers (companies and billing customers)',
  field: 'Custom fields of projects and tasks',
  'task-policy': "The organization's task policy",
  approval: 'Approval decisions made by a named user',
  integration: 'Integration connections (accounting, calendar, …)',
  invoice: 'Invoices: accounting synchronization',
  file: 'Files: legal holds',
  agent: 'Agents: publication per organization',
  reporting: 'Read-only database logins for BI tools',
  notifications: 'Notices for administrators',
  keys: 'Token signing keys',
};

export const COMMANDS: Record<string, CommandSpec> = {
  'org create': {
    summary: 'Create an organization',
    prints: '{"organization_id"}',
    flags: [
      { name: 'name', value: 'NAME', required: true, description: 'Display name of the organization' },
      { name: 'plan', required: true, values: PLANS, description: 'Plan; trial and team cannot hold API Clients' },
      { name: 'timezone', value: 'TZ', required: true, description: TIMEZONE_HINT },
      { name: 'currency', value: 'CODE', required: true, description: 'Default currency, ISO 4217 (e.g. EUR)' },
      { name: 'locale', value: 'LOCALE', required: true, description: 'Locale, e.g. en-GB' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select control.org_create(${need(f, 'name')}, ${need(f, 'plan')}, ${need(f, 'timezone')},
        ${need(f, 'currency')}, ${need(f, 'locale')}, ${process.env.SVC_WEB_BASE_URL ?? 'https://app.svc.example'}) as id`;
      return { organization_id: r!.id };
    },
  },
  'org set-status': {
    summary: "Change an organization's status",
    prints: '{"organization_id","status"}',
    flags: [ORG, { name: 'status', required: true, values: ORG_STATUSES, description: 'New status' }],
    run: async (sql, f) => {
      await sql`select control.org_set_status(${need(f, 'org')}, ${need(f, 'status')})`;
      return { organization_id: f.org, status: f.status };
    },
  },
  'org set-plan': {
    summary: "Change an organization's plan",
    prints: '{"organization_id","plan"}',
    flags: [ORG, { name: 'plan', required: true, values: PLANS,
      description: 'New plan; a downgrade to trial or team keeps clients, without an active licence' }],
    run: async (sql, f) => {
      await sql`select control.org_set_plan(${need(f, 'org')}, ${need(f, 'plan')})`;
      return { organization_id: f.org, plan: f.plan };
    },
  },
  'org set-policy': {
    summary: "Change an organization's time and invoice policies (flags left out stay as they are)",
    prints: '{"organization_id","updated"}',
    flags: [
      ORG,
      { name: 'show-approver-identities', kind: 'boolean', description: 'Show API Clients which member decided an approval' },
      { name: 'hr-may-read-time-entries', kind: 'boolean', description: 'Let the hr Role read time entries' },
      { name: 'time-entry-future-days', kind: 'integer', value: 'N', description: 'Days ahead of today time may be entered (0–31)' },
      { name: 'invoices-require-accounting-connection', kind: 'boolean',
        description: 'Refuse to issue invoices without a ready accounting connection' },
      { name: 'invoice-number-prefix', value: 'PREFIX', description: 'Invoice number prefix, up to 12 of A-Z a-z 0-9 / _ - (default INV-)' },
      { name: 'invoice-payment-terms-days', kind: 'integer', value: 'N', description: 'Payment terms in days (0–365, default 30)' },
    ],
    run: async (sql, f) => {
      await sql`select control.org_set_policy(${need(f, 'org')}, ${bool(f, 'show-approver-identities')}, ${bool(f, 'hr-may-read-time-entries')},
        ${f['time-entry-future-days'] === undefined ? null : Number(f['time-entry-future-days'])}::integer)`;
      await sql`select control.org_set_invoice_policy(${need(f, 'org')}, ${bool(f, 'invoices-require-accounting-connection')},
        ${opt(f, 'invoice-number-prefix')}, ${f['invoice-payment-terms-days'] === undefined ? null : Number(f['invoice-payment-terms-days'])}::integer)`;
      return { organization_id: f.org, updated: true };
    },
  },
  'org set-file-policy': {
    summary: 'Set the file policy: maximum size, permitted content types, whether a clean virus scan is required',
    prints: '{"organization_id","updated"}',
    flags: [
      ORG,
      { name: 'max-size-bytes', kind: 'integer', value: 'N', description: 'Largest file accepted (1 to 5368709120; default 104857600)' },
      { name: 'content-types', value: 'LIST', description: 'Comma-separated permitted media types (default: PDF, PNG, JPEG, GIF, WebP, text, CSV, JSON, ZIP, Office documents)' },
      { name: 'require-scan', kind: 'boolean', description: 'No file becomes ready without a clean virus scan' },
    ],
    run: async (sql, f) => {
      await sql`select control.file_policy_set(${need(f, 'org')},
        ${f['max-size-bytes'] === undefined ? null : Number(f['max-size-bytes'])}::bigint, ${list(f['content-types'])}::text[], ${bool(f, 'require-scan')})`;
      return { organization_id: f.org, updated: true };
    },
  },
  'org set-ticket-policy': {
    summary: 'Set the ticket policy: the module on or off, and whether finance and hr read tickets',
    prints: '{"organization_id","updated"}',
    flags: [
      ORG,
      { name: 'module-enabled', kind: 'boolean', description: 'The ticket module (default true); off, every ticket request answers 403 TICKET_MODULE_DISABLED' },
      { name: 'finance-may-read', kind: 'boolean', description: 'Let the finance Role read tickets and their replies (default false)' },
      { name: 'hr-may-read', kind: 'boolean', description: 'Let the hr Role read tickets and their replies (default false)' },
    ],
    run: async (sql, f) => {
      await sql`select control.org_set_ticket_policy(${need(f, 'org')}, ${bool(f, 'module-enabled')}, ${bool(f, 'finance-may-read')}, ${bool(f, 'hr-may-read')})`;
      return { organization_id: f.org, updated: true };
    },
  },
  'reporting grant': {
    summary: 'A read-only database login for a BI tool, bound to one organization and Roles (the reporting views, a 30 s statement timeout); the password is shown once',
    prints: '{"role","password","connection_string"}',
    flags: [ORG, { name: 'roles', value: 'LIST', required: true, description: ROLES_HINT }],
    run: async (sql, f, url) => {
      const [r] = await sql`select * from control.reporting_grant(${need(f, 'org')}, ${list(f.roles)}::text[])`;
      const conn = editDatabaseUrl(url, { username: r!.role_name, password: r!.password });
      return { role: r!.role_name, password: r!.password, connection_string: conn };
    },
  },
  'reporting revoke': {
    summary: 'Remove a BI login (its open sessions end)',
    prints: '{"role","revoked"}',
    flags: [{ name: 'role', value: 'NAME', required: true, description: 'The login (svc_bi_…)' }],
    run: async (sql, f) => {
      await sql`select control.reporting_revoke(${need(f, 'role')})`;
      return { role: f.role, revoked: true };
    },
  },
  'agent publish': {
    summary: 'Publish a catalogue agent in an organization (new organizations start with every agent published)',
    prints: '{"organization_id","agent_id","status"}',
    flags: [{ name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' },
      { name: 'agent', value: 'ID', required: true, description: 'Agent id (agt_…)' }],
    run: async (sql, f) => {
      const [r] = await sql<{ status: string }[]>`select control.agent_set_published(${need(f, 'org')}, ${need(f, 'agent')}, true) as status`;
      return { organization_id: f.org, agent_id: f.agent, status: r!.status };
    },
  },
  'agent unpublish': {
    summary: 'Unpublish an agent: clients get AGENT_NOT_PUBLISHED, and tool calls of its running runs are refused',
    prints: '{"organization_id","agent_id","status"}',
    flags: [{ name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' },
      { name: 'agent', value: 'ID', required: true, description: 'Agent id (agt_…)' }],
    run: async (sql, f) => {
      const [r] = await sql<{ status: string }[]>`select control.agent_set_published(${need(f, 'org')}, ${need(f, 'agent')}, false) as status`;
      return { organization_id: f.org, agent_id: f.agent, status: r!.status };
    },
  },
  'file hold': {
    summary: 'Put a file under a legal hold: it cannot be archived until released',
    prints: '{"file_id","legal_hold"}',
    flags: [{ name: 'file', value: 'ID', required: true, description: 'File id (fil_…)' }],
    run: async (sql, f) => {
      await sql`select control.file_set_legal_hold(${need(f, 'file')}, true)`;
      return { file_id: f.file, legal_hold: true };
    },
  },
  'file release': {
    summary: 'Release a legal hold',
    prints: '{"file_id","legal_hold"}',
    flags: [{ name: 'file', value: 'ID', required: true, description: 'File id (fil_…)' }],
    run: async (sql, f) => {
      await sql`select control.file_set_legal_hold(${need(f, 'file')}, false)`;
      return { file_id: f.file, legal_hold: false };
    },
  },
  'member add': {
    summary: 'Add a member to an organization',
    prints: '{"member_id"}',
    flags: [
      ORG,
      { name: 'email', value: 'EMAIL', required: true, description: 'Email address; the member id (kept in lower case)' },
      { name: 'name', value: 'NAME', required: true, description: 'Display name' },
      { name: 'roles', kind: 'list', value: 'ROLES', description: `${ROLES_HINT} (default member)` },
      { name: 'job-title', value: 'TEXT', description: 'Job title' },
      { name: 'timezone', value: 'TZ', description: TIMEZONE_HINT },
      { name: 'status', values: MEMBER_STATUSES, description: 'Status (default active)' },
      { name: 'employee-number', value: 'TEXT', description: 'Employee number' },
      { name: 'hire-date', value: 'YYYY-MM-DD', description: 'Hire date' },
      { name: 'employment-type', values: EMPLOYMENT_TYPES, description: 'Employment type' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select control.member_add(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'name')},
        ${list(f.roles)}::text[], ${opt(f, 'job-title')}, ${opt(f, 'timezone')}, ${opt(f, 'status')},
        ${opt(f, 'employee-number')}, ${opt(f, 'hire-date')}::date, ${opt(f, 'employment-type')}) as id`;
      return { member_id: r!.id };
    },
  },
  'member set-status': {
    summary: "Change a member's status",
    prints: '{"member_id","status"}',
    flags: [
      ORG,
      { name: 'email', value: 'EMAIL', required: true, description: "The member's email address" },
      { name: 'status', required: true, values: MEMBER_STATUSES, description: 'New status' },
    ],
    run: async (sql, f) => {
      await sql`select control.member_set_status(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'status')})`;
      return { member_id: f.email!.trim().toLowerCase(), status: f.status };
    },
  },
  'client create': {
    summary: 'Create an API Client and its first secret (shown once)',
    prints: '{"client_id","client_secret","secret_id"}',
    flags: [
      ORG,
      { name: 'name', value: 'NAME', required: true, description: 'Name of the client' },
      { name: 'license', required: true, values: LICENSES, description: 'Licence level; a regular licence holds only member' },
      { name: 'roles', kind: 'list', value: 'ROLES', required: true, description: ROLES_HINT },
      { name: 'description', value: 'TEXT', description: 'Free-text description' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select * from control.client_create(${need(f, 'org')}, ${need(f, 'name')}, ${need(f, 'license')},
        ${list(need(f, 'roles'))}::text[], ${opt(f, 'description')})`;
      return { client_id: r!.client_id, client_secret: r!.client_secret, secret_id: r!.secret_id };
    },
  },
  'client set-roles': {
    summary: "Replace an API Client's Roles",
    prints: '{"client_id","svc_roles"}',
    flags: [CLIENT, { name: 'roles', kind: 'list', value: 'ROLES', required: true, description: ROLES_HINT }],
    run: async (sql, f) => {
      await sql`select control.client_set_roles(${need(f, 'client')}, ${list(need(f, 'roles'))}::text[])`;
      return { client_id: f.client, svc_roles: list(f.roles) };
    },
  },
  'client rotate-secret': {
    summary: 'Add a new secret (at most two are active; revoke the old one after switching)',
    prints: '{"client_secret","secret_id"}',
    flags: [CLIENT],
    run: async (sql, f) => {
      const [r] = await sql`select * from control.client_rotate_secret(${need(f, 'client')})`;
      return { client_secret: r!.client_secret, secret_id: r!.secret_id };
    },
  },
  'client revoke-secret': {
    summary: 'Revoke one secret of an API Client',
    prints: '{"client_id","secret_id","revoked"}',
    flags: [CLIENT, { name: 'secret-id', value: 'ID', required: true, description: 'Id of the secret to revoke' }],
    run: async (sql, f) => {
      await sql`select control.client_revoke_secret(${need(f, 'client')}, ${need(f, 'secret-id')})`;
      return { client_id: f.client, secret_id: f['secret-id'], revoked: true };
    },
  },
  'client disable': {
    summary: 'Disable an active API Client (its tokens stop working)',
    prints: '{"client_id","status"}',
    flags: [CLIENT],
    run: async (sql, f) => {
      await sql`select control.client_disable(${need(f, 'client')})`;
      return { client_id: f.client, status: 'disabled' };
    },
  },
  'client enable': {
    summary: 'Enable a disabled API Client',
    prints: '{"client_id","status"}',
    flags: [CLIENT],
    run: async (sql, f) => {
      await sql`select control.client_enable(${need(f, 'client')})`;
      return { client_id: f.client, status: 'active' };
    },
  },
  'client release-license': {
    summary: "Release an API Client's licence back to the organization",
    prints: '{"client_id","license_status"}',
    flags: [CLIENT],
    run: async (sql, f) => {
      await sql`select control.client_release_license(${need(f, 'client')})`;
      return { client_id: f.client, license_status: 'released' };
    },
  },
  'client delete': {
    summary: 'Delete an API Client (kept for audit; secrets revoked, licence released)',
    prints: '{"client_id","status"}',
    flags: [CLIENT],
    run: async (sql, f) => {
      await sql`select control.client_delete(${need(f, 'client')})`;
      return { client_id: f.client, status: 'deleted' };
    },
  },
  'customer create': {
    summary: 'Create a customer',
    prints: '{"customer_id"}',
    flags: [
      ORG,
      { name: 'kind', required: true, values: CUSTOMER_KINDS, description: 'company (for projects) or billing (invoiced)' },
      { name: 'name', value: 'NAME', required: true, description: 'Name of the customer' },
      { name: 'email', value: 'EMAIL', description: 'Address invoices are emailed to' },
      { name: 'currency', value: 'CODE', description: 'Currency, ISO 4217 (e.g. EUR)' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select control.customer_create(${need(f, 'org')}, ${need(f, 'kind')}, ${need(f, 'name')},
        ${opt(f, 'email')}, ${opt(f, 'currency')}) as id`;
      return { customer_id: r!.id };
    },
  },
  'customer delete': {
    summary: 'Delete a customer',
    prints: '{"customer_id","deleted"}',
    flags: [ORG, { name: 'customer', value: 'ID', required: true, description: 'Customer id (com_… or cus_…)' }],
    run: async (sql, f) => {
      await sql`select control.customer_delete(${need(f, 'org')}, ${need(f, 'customer')})`;
      return { customer_id: f.customer, deleted: true };
    },
  },
  'field define': {
    summary: 'Define a custom field, or redefine one with the same --api-name',
    prints: '{"object_type","api_name","schema_version"}',
    flags: [
      ORG,
      { name: 'object', required: true, values: OBJECTS, description: 'Object the field belongs to' },
      { name: 'api-name', value: 'NAME', required: true, description: 'Key of the field in the API' },
      { name: 'label', value: 'TEXT', required: true, description: 'Label shown to users' },
      { name: 'type', required: true, values: FIELD_TYPES, description: 'Field type' },
      { name: 'required', kind: 'boolean', description: 'A value is required (default false)' },
      { name: 'options', kind: 'list', value: 'VALUE:LABEL,…', description: 'Choices of select and multi_select, e.g. gold:Gold,silver:Silver' },
      { name: 'readable-roles', kind: 'list', value: 'ROLES', description: `Roles that may read it: ${ROLES_HINT} (default all)` },
      { name: 'writable-roles', kind: 'list', value: 'ROLES', description: 'Roles that may write it, among the readable ones (default manager)' },
      { name: 'filterable', kind: 'boolean', description: 'Lists may filter by it (default false)' },
      { name: 'sortable', kind: 'boolean', description: 'Lists may sort by it (default false)' },
      { name: 'position', kind: 'integer', value: 'N', description: 'Display position (default 0)' },
    ],
    run: async (sql, f) => {
      // --options value:Label,value2:Label 2
      const options = (list(f.options) ?? []).map((o) => {
        const [value, ...label] = o.split(':');
        return { value: value!, label: label.length ? label.join(':') : value! };
      });
      const [r] = await sql`select control.field_define(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')},
        ${need(f, 'label')}, ${need(f, 'type')}, ${bool(f, 'required')}, ${sql.json(options)}, ${list(f['readable-roles'])}::text[],
        ${list(f['writable-roles'])}::text[], ${bool(f, 'filterable')}, ${bool(f, 'sortable')}, ${f.position ? Number(f.position) : null}::integer)
        as schema_version`;
      return { object_type: f.object, api_name: f['api-name'], schema_version: r!.schema_version };
    },
  },
  'field delete': {
    summary: 'Delete a custom field',
    prints: '{"object_type","api_name","deleted","schema_version"}',
    flags: [
      ORG,
      { name: 'object', required: true, values: OBJECTS, description: 'Object the field belongs to' },
      { name: 'api-name', value: 'NAME', required: true, description: 'Key of the field in the API' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select control.field_delete(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')}) as schema_version`;
      return { object_type: f.object, api_name: f['api-name'], deleted: true, schema_version: r!.schema_version };
    },
  },
  'task-policy set': {
    summary: "Change the organization's task policy (flags left out stay as they are)",
    prints: '{"organization_id","members_may_add_notes","allow_cross_project_dependencies"}',
    flags: [
      ORG,
      { name: 'members-may-add-notes', kind: 'boolean', description: 'Clients with only the member Role may add task notes' },
      { name: 'allow-cross-project-dependencies', kind: 'boolean', description: 'A task may depend on a task of another project' },
    ],
    run: async (sql, f) => {
      await sql`select control.task_policy_set(${need(f, 'org')}, ${bool(f, 'members-may-add-notes')}, ${bool(f, 'allow-cross-project-dependencies')})`;
      return { organization_id: f.org, members_may_add_notes: bool(f, 'members-may-add-notes'),
        allow_cross_project_dependencies: bool(f, 'allow-cross-project-dependencies') };
    },
  },
  'approval decide': {
    summary: 'Decide an approval as a named user (moves the time entry)',
    prints: '{"approval_id","status","decided_by"}',
    flags: [
      { name: 'approval', value: 'ID', required: true, description: 'Approval id (apr_…)' },
      { name: 'decision', required: true, values: DECISIONS, description: 'The decision' },
      { name: 'by', value: 'EMAIL', required: true, description: 'An active member holding the Role the approval needs' },
    ],
    run: async (sql, f) => {
      await sql`select control.approval_decide(${need(f, 'approval')}, ${need(f, 'decision')}, ${need(f, 'by')})`;
      return { approval_id: f.approval, status: f.decision, decided_by: f.by!.trim().toLowerCase() };
    },
  },
  'integration add': {
    summary: 'Record an integration connection',
    prints: '{"connection_id"}',
    flags: [
      ORG,
      { name: 'provider', value: 'NAME', required: true, description: 'Provider, e.g. sandbox or xero (a-z 0-9 _ . -)' },
      // An open set in the database (letters and _), so not checked here.
      { name: 'category', value: 'NAME', required: true,
        description: 'Category, e.g. accounting, calendar, messaging; accounting is read by finance, others by manager' },
      { name: 'ownership', values: OWNERSHIPS, description: 'Whose connection it is (default organization)' },
      { name: 'owner-member', value: 'EMAIL', description: 'The member owning a personal connection (with --ownership personal)' },
      { name: 'status', values: CONNECTION_STATUSES, description: 'Status (default connected)' },
      { name: 'capabilities', kind: 'list', value: 'A,B', description: 'Comma-separated capabilities, e.g. invoice.export,payment.read' },
      { name: 'action-required', value: 'TEXT', description: 'What an administrator must do, up to 500 characters' },
    ],
    run: async (sql, f) => {
      const [r] = await sql`select control.integration_add(${need(f, 'org')}, ${need(f, 'provider')}, ${need(f, 'category')},
        ${f.ownership ?? 'organization'}, ${f.status ?? 'connected'}, ${list(f.capabilities ?? '')}::text[], ${opt(f, 'action-required')},
        ${opt(f, 'owner-member')}) as id`;
      return { connection_id: r!.id };
    },
  },
  'integration update': {
    summary: 'Change an integration connection (flags left out stay as they are)',
    prints: '{"connection_id","updated"}',
    flags: [
      { name: 'id', value: 'ID', required: true, description: 'Connection id (icn_…)' },
      { name: 'status', values: CONNECTION_STATUSES, description: 'New status' },
      { name: 'capabilities', kind: 'list', value: 'A,B', description: 'Comma-separated capabilities (replaces them)' },
      { name: 'action-required', value: 'TEXT', description: 'What an administrator must do, up to 500 characters' },
      { name: 'clear-action-required', kind: 'boolean', description: 'Remove the action-required text' },
    ],
    run: async (sql, f) => {
      await sql`select control.integration_update(${need(f, 'id')}, ${opt(f, 'status')},
        ${f.capabilities === undefined ? null : list(f.capabilities)}::text[], ${opt(f, 'action-required')},
        ${bool(f, 'clear-action-required') === true})`;
      return { connection_id: f.id, updated: true };
    },
  },
  'invoice resync': {
    summary: 'Queue a failed accounting sync again (after the provider problem is fixed)',
    prints: '{"invoice_id","accounting_sync"}',
    flags: [{ name: 'invoice', value: 'ID', required: true, description: 'Invoice id (inv_…)' }],
    run: async (sql, f) => {
      await sql`select control.invoice_sync_retry(${need(f, 'invoice')})`;
      return { invoice_id: f.invoice, accounting_sync: 'pending' };
    },
  },
  'notifications list': {
    summary: "List an organization's notices, e.g. webhook endpoints disabled after failures",
    prints: '{"notifications":[…]}',
    flags: [ORG],
    run: async (sql, f) => {
      const rows = await sql`select id, kind, subject_id, detail, created_at from control.notifications_list(${need(f, 'org')})`;
      return { notifications: rows.map((r) => ({ ...r, id: Number(r.id) })) };
    },
  },
  'keys rotate': {
    summary: 'Add a token signing key (signs from now on; older keys still verify)',
    prints: '{"kid"}',
    flags: [],
    run: async (sql) => {
      const k = await newSigningKey(masterKey());
      await sql`select control.signing_key_add(${k.kid}, ${k.alg}, ${sql.json(k.publicJwk)}, ${k.sealed})`;
      return { kid: k.kid };
    },
  },
  'keys retire': {
    summary: 'Retire a signing key, once the longest token lifetime has passed',
    prints: '{"kid","retired"}',
    flags: [{ name: 'kid', value: 'KID', required: true, description: 'Key id' }],
    run: async (sql, f) => {
      await sql`select control.signing_key_retire(${need(f, 'kid')})`;
      return { kid: f.kid, retired: true };
    },
  },
};

// --- Help -----------------------------------------------------------------------------------

const groupOf = (name: string) => name.split(' ')[0]!;
const commandsOf = (group: string) => Object.keys(COMMANDS).filter((n) => groupOf(n) === group);
/** Groups in the order of their first command. */
const groups = () => [...new Set(Object.keys(COMMANDS).map(groupOf))];
const pad = (s: string, width: number) => s + ' '.repeat(Math.max(0, width - s.length));

const placeholder = (flag: FlagSpec) =>
  flag.values ? flag.values.join('|') : flag.kind === 'boolean' ? 'true|false' : flag.value ?? 'VALUE';

const FOOTER = [
  'Reads DATABASE_URL (an owner connection, not svc_runtime). On success prints one JSON object on stdout;',
  'on failure one JSON object on stderr ({"error", "detail", ...}) and exit code 2 (usage) or 1 (refused).',
];

function usage(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const lines = [
    'svc-admin: the control plane of the Work-Management Service.',
    '',
    'Usage:',
    '  svc-admin <group> <command> [--flag value ...]',
    "  svc-admin <group> --help              the group's commands",
    "  svc-admin <group> <command> --help    the command's flags",
    '',
    'Commands:',
  ];
  for (const group of groups()) {
    for (const name of commandsOf(group)) lines.push(`  ${pad(name, width)}${COMMANDS[name]!.summary}`);
  }
  lines.push('', ...FOOTER);
  return lines.join('\n') + '\n';
}

function groupUsage(group: string): string {
  const names = commandsOf(group);
  const width = Math.max(...names.map((n) => n.length - group.length - 1)) + 2;
  const lines = [`svc-admin ${group}: ${GROUPS[group] ?? ''}`.trimEnd(), '', `Usage: svc-admin ${group} <command> [--flag value ...]`, '', 'Commands:'];
  for (const name of names) lines.push(`  ${pad(name.slice(group.length + 1), width)}${COMMANDS[name]!.summary}`);
  lines.push('', `See svc-admin ${group} <command> --help for a command's flags.`);
  return lines.join('\n') + '\n';
}

function commandUsage(name: string): string {
  const spec = COMMANDS[name]!;
  const required = spec.flags.filter((f) => f.required).map((f) => `--${f.name} ${placeholder(f)}`);
  const optional = spec.flags.some((f) => !f.required) ? ['[flags]'] : [];
  const lines = [
    `svc-admin ${name}: ${spec.summary}.`,
    '',
    `Usage: ${['svc-admin', name, ...required, ...optional].join(' ')}`,
    `Prints: ${spec.prints}`,
    '',
    'Flags:',
  ];
  for (const flag of spec.flags) {
    lines.push(`  --${flag.name} ${placeholder(flag)}${flag.required ? '  (required)' : ''}`);
    lines.push(`      ${flag.description}`);
  }
  lines.push('  -h, --help', '      Show this help');
  return lines.join('\n') + '\n';
}

// --- Parsing --------------------------------------------------------------------------------

type Resolved = { help: string } | { name: string; spec: CommandSpec; flags: Flags };

const isHelp = (a: string) => a === '-h' || a === '--help' || a.startsWith('--help=');

/** `svc-admin <group> <command> --flags`: the words come first, so the command decides how its flags parse. */
function resolve(argv: string[]): Resolved {
  const terminator = argv.indexOf('--');
  const wantsHelp = (terminator < 0 ? argv : argv.slice(0, terminator)).some(isHelp);
  const words: string[] = [];
  let i = 0;
  while (i < argv.length && words.length < 2 && !argv[i]!.startsWith('-')) words.push(argv[i++]!);
  const rest = argv.slice(i);
  if (words.length === 0) {
    if (rest.length === 0 || wantsHelp) return { help: usage() };
    throw new UsageError(`expected a command before ${rest[0]}; see svc-admin --help`);
  }
  const group = words[0]!;
  if (!groups().includes(group)) throw new UsageError(`unknown command "${words.join(' ')}"; see svc-admin --help`);
  if (words.length === 1) {
    if (rest.length === 0 || wantsHelp) return { help: groupUsage(group) };
    throw new UsageError(`expected a command after "${group}" (${commandsOf(group).map((n) => n.slice(group.length + 1)).join(', ')}); `
      + `see svc-admin ${group} --help`);
  }
  const name = words.join(' ');
  const spec = COMMANDS[name];
  if (!spec) {
    throw new UsageError(`unknown command "${name}"; "${group}" has ${commandsOf(group).map((n) => n.slice(group.length + 1)).join(', ')}; `
      + `see svc-admin ${group} --help`);
  }
  if (wantsHelp) return { help: commandUsage(name) };
  return { name, spec, flags: readFlags(name, spec, rest) };
}

function readFlags(name: string, spec: CommandSpec, args: string[]): Flags {
  const see = `see svc-admin ${name} --help`;
  const declared = new Map(spec.flags.map((f) => [f.name, f]));
  // Not strict: the tokens are checked below, so every refusal names the command and its --help.
  const { tokens } = parseArgs({
    args, strict: false, allowPositionals: true, tokens: true,
    options: Object.fromEntries(spec.flags.map((f) => [f.name, { type: 'string' as const }])),
  });
  const flags: Flags = {};
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') throw new UsageError(`unexpected argument "${token.value}" for "${name}"; ${see}`);
    const flag = token.rawName.startsWith('--') ? declared.get(token.name) : undefined;
    if (!flag) throw new UsageError(`unknown flag ${token.rawName} for "${name}"; ${see}`);
    const v = token.value;
    // A value that looks like the next flag means this one has none (`--name --plan x`), as before.
    if (v === undefined || (!token.inlineValue && v.startsWith('--'))) {
      throw new UsageError(`--${flag.name} needs a value (${placeholder(flag)}); ${see}`);
    }
    if (Object.hasOwn(flags, flag.name)) throw new UsageError(`--${flag.name} is given more than once; ${see}`);
    if (flag.values && !flag.values.includes(v)) {
      throw new UsageError(`--${flag.name} must be one of ${flag.values.join(', ')}, not ${JSON.stringify(v)}; ${see}`);
    }
    if (flag.kind === 'boolean' && !BOOLEANS.includes(v)) {
      throw new UsageError(`--${flag.name} must be true or false, not ${JSON.stringify(v)}; ${see}`);
    }
    if (flag.kind === 'integer' && !/^-?\d+$/.test(v)) {
      throw new UsageError(`--${flag.name} must be a whole number, not ${JSON.stringify(v)}; ${see}`);
    }
    flags[flag.name] = v;
  }
  const missing = spec.flags.filter((f) => f.required && flags[f.name] === undefined).map((f) => `--${f.name}`);
  if (missing.length) {
    throw new UsageError(`missing required flag${missing.length > 1 ? 's' : ''} ${missing.join(', ')} for "${name}"; ${see}`);
  }
  const empty = spec.flags.find((f) => f.required && flags[f.name] === '');
  if (empty) throw new UsageError(`--${empty.name} may not be empty; ${see}`);
  return flags;
}

// --- Running --------------------------------------------------------------------------------

interface PgError { code?: string; message?: string; detail?: string; constraint_name?: string }

function describeError(e: unknown): Record<string, unknown> {
  if (e instanceof UsageError) return { error: 'USAGE', detail: e.message };
  const pg = e as PgError;
  if (pg && typeof pg.code === 'string') {
    if (pg.code.startsWith('SV')) return { error: pg.message, detail: pg.detail || undefined };
    if (pg.code === '23505') return { error: 'ALREADY_EXISTS', detail: pg.detail, constraint: constraintNamed(pg) };
    if (pg.code === '23514' || pg.code === '23502' || pg.code === '22P02' || pg.code === '22007' || pg.code === '22008') {
      return { error: 'INVALID_VALUE', detail: pg.message, constraint: constraintNamed(pg) };
    }
    if (pg.code === '23503') return { error: 'REFERENCE_NOT_FOUND', detail: pg.detail, constraint: constraintNamed(pg) };
    return { error: 'DATABASE_ERROR', sqlstate: pg.code, detail: pg.message };
  }
  return { error: 'FAILED', detail: e instanceof Error ? e.message : String(e) };
}

/** `out`: the command's JSON (stdout); `err`: the error's JSON (stderr); `text`: help (stdout, plain). */
export interface RunResult { code: number; out?: object; err?: object; text?: string }

export async function run(argv: string[], databaseUrl = process.env.DATABASE_URL): Promise<RunResult> {
  try {
    const resolved = resolve(argv);
    if ('help' in resolved) return { code: 0, text: resolved.help };
    if (!databaseUrl) throw new UsageError('DATABASE_URL is not set; svc-admin needs an owner connection URL, e.g. postgres://postgres@127.0.0.1:5432/svc');
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return { code: 0, out: await sql.begin((tx) => resolved.spec.run(tx as unknown as Sql, resolved.flags, databaseUrl)) };
    } finally {
      await sql.end();
    }
  } catch (e) {
    return { code: e instanceof UsageError ? 2 : 1, err: describeError(e) };
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.env.SVC_ADMIN_MAIN === '1') {
  // run() turns every failure into a JSON error; the catch only keeps a stack trace off the terminal.
  const result: RunResult = await run(process.argv.slice(2)).catch((e: unknown) => ({ code: 1, err: describeError(e) }));
  if (result.text !== undefined) process.stdout.write(result.text);
  if (result.out) process.stdout.write(JSON.stringify(result.out) + '\n');
  if (result.err) process.stderr.write(JSON.stringify(result.err) + '\n');
  process.exitCode = result.code;
}
