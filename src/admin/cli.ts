// svc-admin: the control plane for administrators. Each command wraps one function of the
// `control` schema and prints exactly one JSON object on stdout; errors print one JSON object
// on stderr and exit non-zero. Reads DATABASE_URL (an owner connection, not svc_runtime).
import postgres from 'postgres';
import { newSigningKey } from '../auth/tokens.ts';
import { masterKey } from '../config.ts';

type Flags = Record<string, string>;
type Sql = postgres.Sql;

class UsageError extends Error {}

function parseArgs(argv: string[]): { words: string[]; flags: Flags } {
  const words: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
      else {
        const v = argv[i + 1];
        if (v === undefined || v.startsWith('--')) throw new UsageError(`${a} needs a value`);
        flags[a.slice(2)] = v;
        i++;
      }
    } else words.push(a);
  }
  return { words, flags };
}

const need = (f: Flags, name: string) => {
  const v = f[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
};
const list = (v: string | undefined) => (v === undefined ? null : v.split(',').map((s) => s.trim()).filter(Boolean));
const opt = (f: Flags, name: string) => f[name] ?? null;

type Command = (sql: Sql, f: Flags) => Promise<Record<string, unknown>>;

export const COMMANDS: Record<string, Command> = {
  'org create': async (sql, f) => {
    const [r] = await sql`select control.org_create(${need(f, 'name')}, ${need(f, 'plan')}, ${need(f, 'timezone')},
      ${need(f, 'currency')}, ${need(f, 'locale')}, ${process.env.SVC_WEB_BASE_URL ?? 'https://app.svc.example'}) as id`;
    return { organization_id: r!.id };
  },
  'org set-status': async (sql, f) => {
    await sql`select control.org_set_status(${need(f, 'org')}, ${need(f, 'status')})`;
    return { organization_id: f.org, status: f.status };
  },
  'org set-plan': async (sql, f) => {
    await sql`select control.org_set_plan(${need(f, 'org')}, ${need(f, 'plan')})`;
    return { organization_id: f.org, plan: f.plan };
  },
  'member add': async (sql, f) => {
    const [r] = await sql`select control.member_add(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'name')},
      ${list(f.roles)}::text[], ${opt(f, 'job-title')}, ${opt(f, 'timezone')}, ${opt(f, 'status')},
      ${opt(f, 'employee-number')}, ${opt(f, 'hire-date')}::date, ${opt(f, 'employment-type')}) as id`;
    return { member_id: r!.id };
  },
  'member set-status': async (sql, f) => {
    await sql`select control.member_set_status(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'status')})`;
    return { member_id: f.email!.trim().toLowerCase(), status: f.status };
  },
  'client create': async (sql, f) => {
    const [r] = await sql`select * from control.client_create(${need(f, 'org')}, ${need(f, 'name')}, ${need(f, 'license')},
      ${list(need(f, 'roles'))}::text[], ${opt(f, 'description')})`;
    return { client_id: r!.client_id, client_secret: r!.client_secret, secret_id: r!.secret_id };
  },
  'client set-roles': async (sql, f) => {
    await sql`select control.client_set_roles(${need(f, 'client')}, ${list(need(f, 'roles'))}::text[])`;
    return { client_id: f.client, svc_roles: list(f.roles) };
  },
  'client rotate-secret': async (sql, f) => {
    const [r] = await sql`select * from control.client_rotate_secret(${need(f, 'client')})`;
    return { client_secret: r!.client_secret, secret_id: r!.secret_id };
  },
  'client revoke-secret': async (sql, f) => {
    await sql`select control.client_revoke_secret(${need(f, 'client')}, ${need(f, 'secret-id')})`;
    return { client_id: f.client, secret_id: f['secret-id'], revoked: true };
  },
  'client disable': async (sql, f) => {
    await sql`select control.client_disable(${need(f, 'client')})`;
    return { client_id: f.client, status: 'disabled' };
  },
  'client enable': async (sql, f) => {
    await sql`select control.client_enable(${need(f, 'client')})`;
    return { client_id: f.client, status: 'active' };
  },
  'client release-license': async (sql, f) => {
    await sql`select control.client_release_license(${need(f, 'client')})`;
    return { client_id: f.client, license_status: 'released' };
  },
  'client delete': async (sql, f) => {
    await sql`select control.client_delete(${need(f, 'client')})`;
    return { client_id: f.client, status: 'deleted' };
  },
  'customer create': async (sql, f) => {
    const [r] = await sql`select control.customer_create(${need(f, 'org')}, ${need(f, 'kind')}, ${need(f, 'name')},
      ${opt(f, 'email')}, ${opt(f, 'currency')}) as id`;
    return { customer_id: r!.id };
  },
  'customer delete': async (sql, f) => {
    await sql`select control.customer_delete(${need(f, 'org')}, ${need(f, 'customer')})`;
    return { customer_id: f.customer, deleted: true };
  },
  'field define': async (sql, f) => {
    // --options value:Label,value2:Label 2
    const options = (list(f.options) ?? []).map((o) => {
      const [value, ...label] = o.split(':');
      return { value: value!, label: label.length ? label.join(':') : value! };
    });
    const bool = (name: string) => (f[name] === undefined ? null : ['true', 'yes', '1'].includes(f[name]!));
    const [r] = await sql`select control.field_define(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')},
      ${need(f, 'label')}, ${need(f, 'type')}, ${bool('required')}, ${sql.json(options)}, ${list(f['readable-roles'])}::text[],
      ${list(f['writable-roles'])}::text[], ${bool('filterable')}, ${bool('sortable')}, ${f.position ? Number(f.position) : null}::integer)
      as schema_version`;
    return { object_type: f.object, api_name: f['api-name'], schema_version: r!.schema_version };
  },
  'field delete': async (sql, f) => {
    const [r] = await sql`select control.field_delete(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')}) as schema_version`;
    return { object_type: f.object, api_name: f['api-name'], deleted: true, schema_version: r!.schema_version };
  },
  'task-policy set': async (sql, f) => {
    const bool = (name: string) => (f[name] === undefined ? null : ['true', 'yes', '1'].includes(f[name]!));
    await sql`select control.task_policy_set(${need(f, 'org')}, ${bool('members-may-add-notes')}, ${bool('allow-cross-project-dependencies')})`;
    return { organization_id: f.org, members_may_add_notes: bool('members-may-add-notes'),
      allow_cross_project_dependencies: bool('allow-cross-project-dependencies') };
  },
  'org set-policy': async (sql, f) => {
    const bool = (name: string) => (f[name] === undefined ? null : ['true', 'yes', '1'].includes(f[name]!));
    await sql`select control.org_set_policy(${need(f, 'org')}, ${bool('show-approver-identities')}, ${bool('hr-may-read-time-entries')},
      ${f['time-entry-future-days'] === undefined ? null : Number(f['time-entry-future-days'])}::integer)`;
    await sql`select control.org_set_invoice_policy(${need(f, 'org')}, ${bool('invoices-require-accounting-connection')},
      ${opt(f, 'invoice-number-prefix')}, ${f['invoice-payment-terms-days'] === undefined ? null : Number(f['invoice-payment-terms-days'])}::integer)`;
    return { organization_id: f.org, updated: true };
  },
  'approval decide': async (sql, f) => {
    await sql`select control.approval_decide(${need(f, 'approval')}, ${need(f, 'decision')}, ${need(f, 'by')})`;
    return { approval_id: f.approval, status: f.decision, decided_by: f.by!.trim().toLowerCase() };
  },
  'integration add': async (sql, f) => {
    const [r] = await sql`select control.integration_add(${need(f, 'org')}, ${need(f, 'provider')}, ${need(f, 'category')},
      ${f.ownership ?? 'organization'}, ${f.status ?? 'connected'}, ${list(f.capabilities ?? '')}::text[], ${opt(f, 'action-required')},
      ${opt(f, 'owner-member')}) as id`;
    return { connection_id: r!.id };
  },
  'integration update': async (sql, f) => {
    await sql`select control.integration_update(${need(f, 'id')}, ${opt(f, 'status')},
      ${f.capabilities === undefined ? null : list(f.capabilities)}::text[], ${opt(f, 'action-required')},
      ${f['clear-action-required'] === 'true'})`;
    return { connection_id: f.id, updated: true };
  },
  'invoice resync': async (sql, f) => {
    await sql`select control.invoice_sync_retry(${need(f, 'invoice')})`;
    return { invoice_id: f.invoice, accounting_sync: 'pending' };
  },
  'notifications list': async (sql, f) => {
    const rows = await sql`select id, kind, subject_id, detail, created_at from control.notifications_list(${need(f, 'org')})`;
    return { notifications: rows.map((r) => ({ ...r, id: Number(r.id) })) };
  },
  'keys rotate': async (sql) => {
    const k = await newSigningKey(masterKey());
    await sql`select control.signing_key_add(${k.kid}, ${k.alg}, ${sql.json(k.publicJwk)}, ${k.sealed})`;
    return { kid: k.kid };
  },
  'keys retire': async (sql, f) => {
    await sql`select control.signing_key_retire(${need(f, 'kid')})`;
    return { kid: f.kid, retired: true };
  },
};

interface PgError { code?: string; message?: string; detail?: string; constraint_name?: string }

function describeError(e: unknown): Record<string, unknown> {
  if (e instanceof UsageError) return { error: 'USAGE', detail: e.message };
  const pg = e as PgError;
  if (pg && typeof pg.code === 'string') {
    if (pg.code.startsWith('SV')) return { error: pg.message, detail: pg.detail || undefined };
    if (pg.code === '23505') return { error: 'ALREADY_EXISTS', detail: pg.detail, constraint: pg.constraint_name };
    if (pg.code === '23514' || pg.code === '23502' || pg.code === '22P02' || pg.code === '22007' || pg.code === '22008') {
      return { error: 'INVALID_VALUE', detail: pg.message, constraint: pg.constraint_name };
    }
    if (pg.code === '23503') return { error: 'REFERENCE_NOT_FOUND', detail: pg.detail, constraint: pg.constraint_name };
    return { error: 'DATABASE_ERROR', sqlstate: pg.code, detail: pg.message };
  }
  return { error: 'FAILED', detail: e instanceof Error ? e.message : String(e) };
}

export async function run(argv: string[], databaseUrl = process.env.DATABASE_URL): Promise<{ code: number; out?: object; err?: object }> {
  try {
    const { words, flags } = parseArgs(argv);
    const name = words.slice(0, 2).join(' ');
    const command = COMMANDS[name];
    if (!command || words.length !== 2) {
      throw new UsageError(`unknown command "${words.join(' ')}"; commands: ${Object.keys(COMMANDS).join('; ')}`);
    }
    if (!databaseUrl) throw new UsageError('DATABASE_URL is not set');
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return { code: 0, out: await sql.begin((tx) => command(tx as unknown as Sql, flags)) };
    } finally {
      await sql.end();
    }
  } catch (e) {
    return { code: e instanceof UsageError ? 2 : 1, err: describeError(e) };
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.env.SVC_ADMIN_MAIN === '1') {
  const result = await run(process.argv.slice(2));
  if (result.out) process.stdout.write(JSON.stringify(result.out) + '\n');
  if (result.err) process.stderr.write(JSON.stringify(result.err) + '\n');
  process.exitCode = result.code;
}
