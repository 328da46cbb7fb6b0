// svc-admin org: create an organization, and change its status, plan and policies.
import { ORG, TIMEZONE_HINT, need, list, opt, bool, type CommandGroup } from './command.ts';

const PLANS = ['trial', 'team', 'business', 'enterprise'] as const;
const ORG_STATUSES = ['active', 'restricted', 'suspended'] as const;

export const organizationCommands: CommandGroup = {
  name: 'org',
  summary: 'Organizations: creation, status, plan and policies',
  commands: {
    create: {
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
    'set-status': {
      summary: "Change an organization's status",
      prints: '{"organization_id","status"}',
      flags: [ORG, { name: 'status', required: true, values: ORG_STATUSES, description: 'New status' }],
      run: async (sql, f) => {
        await sql`select control.org_set_status(${need(f, 'org')}, ${need(f, 'status')})`;
        return { organization_id: f.org, status: f.status };
      },
    },
    'set-plan': {
      summary: "Change an organization's plan",
      prints: '{"organization_id","plan"}',
      flags: [ORG, { name: 'plan', required: true, values: PLANS,
        description: 'New plan; a downgrade to trial or team keeps clients, without an active licence' }],
      run: async (sql, f) => {
        await sql`select control.org_set_plan(${need(f, 'org')}, ${need(f, 'plan')})`;
        return { organization_id: f.org, plan: f.plan };
      },
    },
    'set-policy': {
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
    'set-file-policy': {
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
    'set-ticket-policy': {
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
  },
};
