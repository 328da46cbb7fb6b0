// `make dbdoc`: writes docs/database.md, the catalogue a DBA reviews (RLS, policies, grants, triggers
// in firing order, functions and who may execute them), generated from a freshly migrated scratch
// database. test/db/database-doc.test.ts regenerates it and fails when the committed file differs.
//
// The text must not depend on the server: PostgreSQL 15 and 18 give the same document. Hence only
// our schemas (never graphile_worker's), no OIDs, no version-specific privileges (MAINTAIN, 17+), a
// fixed search_path while deparsing (it decides which names get qualified), byte-order ("C") sorting,
// and the migrating role shown as "owner" rather than by name (it is whoever DATABASE_URL names).
import { mkdirSync, writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { serverUrl, migrate, withDatabase, embeddedPort } from './db.ts';
import { citusMissing, createClusterDatabase, dropClusterDatabase, startCluster } from './citus.ts';
import { isMain } from '../src/is-main.ts';

export const DOC_PATH = 'docs/database.md';
/** The same catalogue read on a Citus coordinator, with where each table's rows and each call run. */
export const CITUS_DOC_PATH = 'docs/database-citus.md';
const TABLE_SCHEMAS = ['app', 'app_private'];
const SCHEMAS = ['api', 'app', 'app_private', 'control', 'reporting', 'reporting_private', 'skills'];

export interface DocOptions {
  /** Leave out the test template's fixtures (test/fixtures/*.sql): relations and functions named test_*. */
  excludeTestFixtures?: boolean;
}

interface Grant { grantee: string; privilege: string; grantable: boolean }
interface Relation {
  oid: string; schema: string; name: string; kind: string; persistence: string; owner: string;
  rls: boolean; forced: boolean; options: string[] | null; acl: Grant[]; defaults: Grant[];
}
interface ColumnGrant extends Grant { oid: string; column: string }
interface Policy { oid: string; name: string; cmd: string; permissive: boolean; roles: string[]; using: string | null; check: string | null; reason: string | null }
interface Placement { table: string; method: string; column: string | null; colocated: boolean }
interface Delegation { fn: string; argument: number; force: boolean }
interface Trigger {
  oid: string; name: string; type: number; enabled: string; is_constraint: boolean; deferrable: boolean;
  initially_deferred: boolean; old_table: string | null; new_table: string | null; columns: string[]; def: string;
}
interface Func {
  schema: string; name: string; args: string; kind: string; definer: boolean; volatility: string;
  config: string[] | null; owner: string; acl: Grant[]; defaults: Grant[];
}
interface Schema { name: string; owner: string; acl: Grant[]; defaults: Grant[] }

// aclexplode as JSON, grantee 0 being PUBLIC; `acl` is the object's ACL column, `kind` acldefault's letter.
const grants = (acl: string, kind: string, owner: string) => `
  (select coalesce(json_agg(json_build_object('grantee', coalesce(r.rolname::text, 'PUBLIC'),
     'privilege', a.privilege_type, 'grantable', a.is_grantable)), '[]')
   from aclexplode(coalesce(${acl}, acldefault(${kind}, ${owner}))) a left join pg_roles r on r.oid = a.grantee)`;
const defaults = (kind: string, owner: string) => `
  (select coalesce(json_agg(json_build_object('grantee', coalesce(r.rolname::text, 'PUBLIC'),
     'privilege', a.privilege_type, 'grantable', a.is_grantable)), '[]')
   from aclexplode(acldefault(${kind}, ${owner})) a left join pg_roles r on r.oid = a.grantee)`;
// Objects that belong to an extension are not ours to document.
const notExtension = (classid: string, oid: string) =>
  `not exists (select 1 from pg_depend d where d.classid = '${classid}'::regclass and d.objid = ${oid} and d.deptype = 'e')`;

interface Catalog {
  me: string; schemas: Schema[]; relations: Relation[]; columns: ColumnGrant[]; policies: Policy[];
  triggers: Trigger[]; functions: Func[];
  /** On a Citus coordinator: each table's placement and the calls delegated to a worker. */
  cluster?: { placements: Placement[]; delegations: Delegation[] };
}

async function readCatalog(sql: postgres.Sql): Promise<Catalog> {
  return sql.begin('read only', async (tx) => {
    // pg_get_expr, pg_get_triggerdef and reg* casts qualify names not on the search_path: pin it.
    await tx`set local search_path = pg_catalog`;
    // The schemas' owner (svc_schema, or the superuser that ran the migrations on a cluster): "owner".
    const [{ me }] = await tx`select pg_get_userbyid(nspowner)::text as me from pg_namespace where nspname = 'app'` as unknown as [{ me: string }];
    const schemas = await tx.unsafe(`
      select n.nspname::text as name, pg_get_userbyid(n.nspowner)::text as owner,
        ${grants('n.nspacl', `'n'`, 'n.nspowner')} as acl, ${defaults(`'n'`, 'n.nspowner')} as defaults
      from pg_namespace n where n.nspname = any($1) order by n.nspname collate "C"`, [SCHEMAS]) as unknown as Schema[];
    const kind = `(case when c.relkind = 'S' then 's' else 'r' end)::"char"`;
    const relations = await tx.unsafe(`
      select c.oid::text as oid, n.nspname::text as schema, c.relname::text as name, c.relkind::text as kind,
        c.relpersistence::text as persistence, pg_get_userbyid(c.relowner)::text as owner,
        c.relrowsecurity as rls, c.relforcerowsecurity as forced, c.reloptions::text[] as options,
        ${grants('c.relacl', kind, 'c.relowner')} as acl, ${defaults(kind, 'c.relowner')} as defaults
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1) and c.relkind in ('r', 'p', 'v', 'm', 'S') and ${notExtension('pg_class', 'c.oid')}
      order by n.nspname collate "C", c.relname collate "C"`, [SCHEMAS]) as unknown as Relation[];
    const columns = await tx.unsafe(`
      select c.oid::text as oid, at.attname::text as column, coalesce(r.rolname::text, 'PUBLIC') as grantee,
        a.privilege_type as privilege, a.is_grantable as grantable
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
        join pg_attribute at on at.attrelid = c.oid and at.attnum > 0 and not at.attisdropped and at.attacl is not null
        cross join lateral aclexplode(at.attacl) a left join pg_roles r on r.oid = a.grantee
      where n.nspname = any($1)
      order by c.oid, at.attnum`, [SCHEMAS]) as unknown as ColumnGrant[];
    const policies = await tx.unsafe(`
      select p.polrelid::text as oid, p.polname::text as name, p.polcmd::text as cmd, p.polpermissive as permissive,
        array(select coalesce(r.rolname::text, 'PUBLIC') from unnest(p.polroles) u(oid)
              left join pg_roles r on r.oid = u.oid order by coalesce(r.rolname::text, 'PUBLIC') collate "C") as roles,
        pg_get_expr(p.polqual, p.polrelid) as using, pg_get_expr(p.polwithcheck, p.polrelid) as check,
        obj_description(p.oid, 'pg_policy') as reason
      from pg_policy p join pg_class c on c.oid = p.polrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1)
      order by p.polname collate "C"`, [SCHEMAS]) as unknown as Policy[];
    // Internal triggers (foreign-key enforcement) are left out: their names embed OIDs.
    const triggers = await tx.unsafe(`
      select t.tgrelid::text as oid, t.tgname::text as name, t.tgtype::int as type, t.tgenabled::text as enabled,
        t.tgconstraint <> 0 as is_constraint, t.tgdeferrable as deferrable, t.tginitdeferred as initially_deferred,
        t.tgoldtable::text as old_table, t.tgnewtable::text as new_table,
        array(select a.attname::text from unnest(t.tgattr::int2[]) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = t.tgrelid and a.attnum = k.attnum order by k.ord) as columns,
        pg_get_triggerdef(t.oid) as def
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1) and not t.tgisinternal
      order by t.tgname collate "C"`, [SCHEMAS]) as unknown as Trigger[];
    const functions = await tx.unsafe(`
      select n.nspname::text as schema, p.proname::text as name, pg_get_function_identity_arguments(p.oid) as args,
        p.prokind::text as kind, p.prosecdef as definer, p.provolatile::text as volatility, p.proconfig::text[] as config,
        pg_get_userbyid(p.proowner)::text as owner,
        ${grants('p.proacl', `'f'`, 'p.proowner')} as acl, ${defaults(`'f'`, 'p.proowner')} as defaults
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = any($1) and ${notExtension('pg_proc', 'p.oid')}
      order by n.nspname collate "C", p.proname collate "C", pg_get_function_identity_arguments(p.oid) collate "C"`, [SCHEMAS]) as unknown as Func[];
    const [{ citus }] = await tx`select exists (select from pg_extension where extname = 'citus') as citus` as unknown as [{ citus: boolean }];
    if (!citus) return { me, schemas, relations, columns, policies, triggers, functions };
    const placements = await tx.unsafe(`
      select c.oid::regclass::text as table,
        case when d.logicalrelid is null then 'local' when d.partmethod = 'h' then 'distributed' else 'reference' end as method,
        case when d.partmethod = 'h' then column_to_column_name(d.logicalrelid, d.partkey) end as column,
        d.colocationid = (select colocationid from pg_dist_partition where logicalrelid = 'app.organizations'::regclass) as colocated
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
        left join pg_dist_partition d on d.logicalrelid = c.oid
      where n.nspname = any($1) and c.relkind in ('r', 'p') and ${notExtension('pg_class', 'c.oid')}
      order by c.oid::regclass::text collate "C"`, [TABLE_SCHEMAS]) as unknown as Placement[];
    const delegations = await tx.unsafe(`
      select o.objid::regprocedure::text as fn, o.distribution_argument_index + 1 as argument, coalesce(o.force_delegation, false) as force
      from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.distribution_argument_index is not null
      order by o.objid::regprocedure::text collate "C"`) as unknown as Delegation[];
    return { me, schemas, relations, columns, policies, triggers, functions, cluster: { placements, delegations } };
  });
}

// ---- rendering ----

// MAINTAIN exists from PostgreSQL 17 on (and the owner holds it by default): leaving it out keeps
// 15 and 18 identical; our migrations cannot grant it while they run on 15.
const PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER', 'USAGE', 'CREATE', 'EXECUTE'];
const LEFT_OUT = new Set(['MAINTAIN']);
const byPrivilege = (a: string, b: string) => PRIVILEGES.indexOf(a) - PRIVILEGES.indexOf(b);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0); // code-unit order, like collate "C" for ASCII

/** Inline code that survives backticks in the text. */
function code(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s}${pad}${fence}`;
}
/** A policy expression under its list item: inline when PostgreSQL deparses it on one line, else a
 * fenced block that keeps the deparser's layout (trailing blanks dropped, so editors cannot change it). */
function expression(label: string, text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd());
  if (lines.length === 1) return `  - ${label} ${code(lines[0]!)}`;
  const fence = '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((m) => m.length + 1)));
  return [`  - ${label}:`, `    ${fence}sql`, ...lines.map((l) => (l ? `    ${l}` : '')), `    ${fence}`].join('\n');
}
/** A table cell: pipes escaped (also inside code spans, as GitHub requires), no line breaks. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');

/** Privileges per grantee (duplicates from several grantors merged); `*` marks WITH GRANT OPTION. */
function perGrantee(acl: Grant[]): Map<string, Map<string, boolean>> {
  const out = new Map<string, Map<string, boolean>>();
  for (const g of acl) {
    if (LEFT_OUT.has(g.privilege)) continue;
    const privs = out.get(g.grantee) ?? new Map<string, boolean>();
    privs.set(g.privilege, (privs.get(g.privilege) ?? false) || g.grantable);
    out.set(g.grantee, privs);
  }
  return out;
}
const privList = (privs: Map<string, boolean>) =>
  [...privs.keys()].sort(byPrivilege).map((p) => p + (privs.get(p) ? '*' : '')).join(', ');

/** Grantees and their privileges, without the owner when it holds exactly its default (full) privileges. */
function effectiveGrants(o: { owner: string; acl: Grant[]; defaults: Grant[] }): [string, Map<string, boolean>][] {
  const actual = perGrantee(o.acl);
  const ownerDefault = perGrantee(o.defaults).get(o.owner);
  const ownerActual = actual.get(o.owner);
  if (ownerDefault && ownerActual && privList(ownerDefault) === privList(ownerActual)) actual.delete(o.owner);
  return [...actual.entries()].sort(([a], [b]) => cmp(a, b));
}

interface Ctx { me: string }
/** A role name; the migrating role is "owner" so the text does not depend on DATABASE_URL's user. */
const role = (ctx: Ctx, name: string) => (name === ctx.me ? 'owner' : name);
const ownerNote = (ctx: Ctx, owner: string) => (owner === ctx.me ? '' : `owner: ${code(owner)}`);

const COMMANDS: Record<string, string> = { r: 'SELECT', a: 'INSERT', w: 'UPDATE', d: 'DELETE', '*': 'ALL' };
const VOLATILITY: Record<string, string> = { i: 'immutable', s: 'stable', v: 'volatile' };
const KINDS: Record<string, string> = { f: '', p: 'procedure ', a: 'aggregate ', w: 'window ' };

// tgtype bits (pg_trigger.h)
const TG_ROW = 1, TG_BEFORE = 2, TG_INSERT = 4, TG_DELETE = 8, TG_UPDATE = 16, TG_TRUNCATE = 32, TG_INSTEAD = 64;
const EVENTS: [number, string][] = [[TG_INSERT, 'INSERT'], [TG_UPDATE, 'UPDATE'], [TG_DELETE, 'DELETE'], [TG_TRUNCATE, 'TRUNCATE']];
// The phases of one statement, in the order they run.
const PHASES = ['BEFORE STATEMENT', 'BEFORE ROW', 'INSTEAD OF ROW', 'AFTER ROW', 'AFTER STATEMENT'];
const ENABLED: Record<string, string> = { O: '', D: 'disabled', R: 'replica only', A: 'always (also in replica)' };

function phase(type: number): string {
  const timing = type & TG_BEFORE ? 'BEFORE' : type & TG_INSTEAD ? 'INSTEAD OF' : 'AFTER';
  return `${timing} ${type & TG_ROW ? 'ROW' : 'STATEMENT'}`;
}

function triggerRows(triggers: Trigger[]): string[][] {
  const rows: { event: number; phase: number; name: string; row: string[] }[] = [];
  for (const t of triggers) {
    const call = /\bEXECUTE (?:FUNCTION|PROCEDURE) (.+)$/s.exec(t.def)?.[1] ?? t.def;
    const when = /\bWHEN \((.*)\) EXECUTE (?:FUNCTION|PROCEDURE) /s.exec(t.def)?.[1];
    const notes: string[] = [];
    if (t.is_constraint) {
      notes.push('constraint trigger' + (t.deferrable ? (t.initially_deferred
        ? ', deferrable initially deferred (fires at commit)' : ', deferrable initially immediate') : ''));
    }
    if (ENABLED[t.enabled]) notes.push(ENABLED[t.enabled]!);
    if (t.old_table) notes.push(`old table ${code(t.old_table)}`);
    if (t.new_table) notes.push(`new table ${code(t.new_table)}`);
    if (when) notes.push(`when ${code(when)}`);
    EVENTS.forEach(([bit, event], e) => {
      if (!(t.type & bit)) return;
      const label = bit === TG_UPDATE && t.columns.length ? `UPDATE OF ${t.columns.join(', ')}` : event;
      rows.push({ event: e, phase: PHASES.indexOf(phase(t.type)), name: t.name,
        row: [event, phase(t.type), code(t.name), code(call), [label === event ? '' : label, ...notes].filter(Boolean).join('; ')] });
    });
  }
  // Same event and phase: PostgreSQL fires them in name order (byte order of the names).
  rows.sort((a, b) => a.event - b.event || a.phase - b.phase || cmp(a.name, b.name));
  return rows.map((r) => r.row);
}

function relationGrants(ctx: Ctx, r: Relation, columns: ColumnGrant[]): string[][] {
  const byGrantee = new Map<string, Map<string, string[]>>();
  for (const c of columns) {
    if (LEFT_OUT.has(c.privilege)) continue;
    const privs = byGrantee.get(c.grantee) ?? new Map<string, string[]>();
    privs.set(c.privilege, [...(privs.get(c.privilege) ?? []), c.column + (c.grantable ? '*' : '')]);
    byGrantee.set(c.grantee, privs);
  }
  const tableLevel = new Map(effectiveGrants(r));
  const grantees = [...new Set([...tableLevel.keys(), ...byGrantee.keys()])].sort(cmp);
  return grantees.map((g) => {
    const cols = byGrantee.get(g);
    const colText = cols ? [...cols.keys()].sort(byPrivilege).map((p) => `${p} (${cols.get(p)!.join(', ')})`).join('; ') : '';
    const tl = tableLevel.get(g);
    return [role(ctx, g), tl && tl.size ? privList(tl) : '—', colText || '—'];
  });
}

export function renderDoc(cat: Catalog, opts: DocOptions = {}): string {
  const ctx: Ctx = { me: cat.me };
  const fixture = (name: string) => !!opts.excludeTestFixtures && name.startsWith('test_');
  const relations = cat.relations.filter((r) => !fixture(r.name));
  const functions = cat.functions.filter((f) => !fixture(f.name));
  const out: string[] = [];
  const para = (s: string) => out.push(s, '');

  const make = cat.cluster ? 'make dbdoc-citus' : 'make dbdoc';
  para(`<!-- Generated by \`${make}\` (scripts/database-doc.ts). Do not edit. -->`);
  para(cat.cluster ? '# Database catalogue on a Citus cluster: placement, row-level security, grants, triggers, functions'
    : '# Database catalogue: row-level security, grants, triggers, functions');
  para(`Generated by \`${make}\` (\`scripts/database-doc.ts\`) from a freshly migrated database`
    + (cat.cluster ? ' on the coordinator of a local Citus cluster (`scripts/citus.ts`)' : '') + '; do not edit by hand '
    + `(\`test/db/database-doc.test.ts\`${cat.cluster ? ' under `make test-citus`' : ''} fails when it is stale). `
    + (cat.cluster ? 'One server\'s is `docs/database.md`; this one adds where each table\'s rows live and which calls run on a worker, '
      + 'and has the cluster\'s own objects (the BI relay: schema `reporting_private`, its functions and the policy for `svc_relay`). ' : '')
    + 'It covers schemas `app` and `app_private` (tables), and `api`, `app`, `app_private`, `control`, `reporting`, '
    + (cat.cluster ? '`reporting_private` ' : '') + 'and `skills` (views, sequences, functions). '
    + 'The text is the same on PostgreSQL 15 and 18, so it leaves out:');
  para([
    '- graphile-worker\'s schema `graphile_worker` (installed by its own migrations, not ours) and objects of extensions;',
    '- internal triggers (foreign-key enforcement: their names embed OIDs). They are AFTER ROW triggers named `RI_ConstraintTrigger_…`, which sort before `_NNN_…`;',
    '- the MAINTAIN privilege (PostgreSQL 17 and later; the owner holds it there by default);',
    '- function bodies, view queries, columns, keys and other constraints (see `db/migrations/`).',
  ].join('\n'));
  para(`Every object is owned by the schemas' owner, \`${cat.me}\`, written \`owner\`; another owner is named. `
    + 'The owner\'s own full privileges are not listed. '
    + '`*` after a privilege: WITH GRANT OPTION. Expressions are PostgreSQL\'s own deparsing (`pg_get_expr`).');

  if (cat.cluster) {
    para('## Placement');
    para('`distributed`: split by the named column into shards, colocated with `app.organizations` (an organization\'s rows of '
      + 'every such table are on one node); `reference`: a copy on every node; `local`: on the coordinator only.');
    const placements = cat.cluster.placements.filter((p) => !fixture(p.table.split('.')[1]!));
    para(table(['table', 'placement', 'by', 'colocated with app.organizations'], placements.map((p) => [
      code(p.table), p.method, p.column ? code(p.column) : '—', p.method === 'distributed' ? (p.colocated ? 'yes' : 'no') : '—',
    ])));
    para('Calls delegated to the node that holds the organization named by the argument (Citus runs the whole call there):');
    const delegations = cat.cluster.delegations.filter((d) => !fixture(d.fn.split('.')[1]!));
    para(table(['function', 'argument', 'forced'], delegations.map((d) => [code(d.fn), `$${d.argument}`, d.force ? 'yes' : 'no'])));
  }

  para('## Schemas');
  para(table(['schema', 'owner', 'grants'], cat.schemas.map((s) => [
    code(s.name), s.owner === ctx.me ? 'owner' : code(s.owner),
    effectiveGrants(s).map(([g, p]) => `${role(ctx, g)}: ${privList(p)}`).join('; ') || '—',
  ])));

  para('## Tables');
  para('Row-level security: a table with RLS enabled shows a role only the rows its policies allow (no policy: no rows). '
    + 'Permissive policies of a command are OR-ed, restrictive ones AND-ed to them. `forced` applies RLS to the table owner too '
    + '(superusers and BYPASSRLS roles always bypass it). '
    + 'Triggers are listed per event in the order they run within a statement (BEFORE STATEMENT, BEFORE ROW, INSTEAD OF ROW, '
    + 'AFTER ROW, AFTER STATEMENT); within one of these, PostgreSQL fires them in name order. '
    + 'A trigger on `UPDATE OF` columns fires only when one of them is a target of the UPDATE.');
  const tables = relations.filter((r) => TABLE_SCHEMAS.includes(r.schema) && (r.kind === 'r' || r.kind === 'p'));
  const policiesOf = (r: Relation) => cat.policies.filter((p) => p.oid === r.oid);
  const triggersOf = (r: Relation) => cat.triggers.filter((t) => t.oid === r.oid);
  const rlsState = (r: Relation) => (r.rls ? (r.forced ? 'enabled, forced' : 'enabled, not forced') : 'disabled');
  para(table(['table', 'RLS', 'policies', 'triggers'], tables.map((r) => [
    code(`${r.schema}.${r.name}`), rlsState(r), String(policiesOf(r).length), String(triggersOf(r).length),
  ])));

  for (const r of tables) {
    para(`### ${r.schema}.${r.name}`);
    const facts = [`RLS: ${rlsState(r)}`];
    if (r.kind === 'p') facts.push('partitioned');
    if (r.persistence === 'u') facts.push('unlogged');
    const note = ownerNote(ctx, r.owner);
    if (note) facts.push(note);
    para(facts.join('; ') + '.');

    const g = relationGrants(ctx, r, cat.columns.filter((c) => c.oid === r.oid));
    para(g.length ? `Grants:\n\n${table(['role', 'table privileges', 'column privileges'], g)}` : 'Grants: none (owner only).');

    const policies = policiesOf(r);
    if (!policies.length) para(r.rls ? 'Policies: none (roles subject to RLS see and change no rows).' : 'Policies: none.');
    else {
      para('Policies:');
      para(policies.map((p) => {
        const lines = [`- ${code(p.name)}: ${COMMANDS[p.cmd] ?? p.cmd}, ${p.permissive ? 'permissive' : 'restrictive'}, `
          + `to ${p.roles.map((x) => role(ctx, x)).join(', ')}`];
        if (p.using !== null) lines.push(expression('using', p.using));
        if (p.check !== null) lines.push(expression('with check', p.check));
        if (p.reason) lines.push(`  - why: ${p.reason.replace(/\s*\n\s*/g, ' ')}`);
        return lines.join('\n');
      }).join('\n'));
    }

    const triggers = triggersOf(r);
    para(triggers.length
      ? `Triggers:\n\n${table(['event', 'timing', 'trigger', 'calls', 'notes'], triggerRows(triggers))}`
      : 'Triggers: none.');
  }

  para('## Views');
  para('`security_invoker`: the view reads its tables with the caller\'s privileges and RLS; without it, with the view owner\'s.');
  const views = relations.filter((r) => r.kind === 'v' || r.kind === 'm');
  para(table(['view', 'security_invoker', 'grants'], views.map((v) => {
    const opt = (k: string) => v.options?.find((o) => o.startsWith(`${k}=`))?.slice(k.length + 1);
    const invoker = ['true', 'on', 'yes', '1'].includes((opt('security_invoker') ?? 'false').toLowerCase());
    const extra = [v.kind === 'm' ? 'materialized' : '', opt('security_barrier') ? `security_barrier=${opt('security_barrier')}` : '',
      opt('check_option') ? `check_option=${opt('check_option')}` : '', ownerNote(ctx, v.owner)].filter(Boolean);
    const g = relationGrants(ctx, v, cat.columns.filter((c) => c.oid === v.oid))
      .map(([who, tl, cols]) => `${who}: ${[tl, cols].filter((x) => x !== '—').join('; ')}`);
    return [code(`${v.schema}.${v.name}`) + (extra.length ? ` (${extra.join(', ')})` : ''), invoker ? 'yes' : 'no', g.join('; ') || '—'];
  })));

  para('## Sequences');
  const sequences = relations.filter((r) => r.kind === 'S');
  para(sequences.length ? table(['sequence', 'grants'], sequences.map((s) => [
    code(`${s.schema}.${s.name}`) + (ownerNote(ctx, s.owner) ? ` (${ownerNote(ctx, s.owner)})` : ''),
    effectiveGrants(s).map(([g, p]) => `${role(ctx, g)}: ${privList(p)}`).join('; ') || '—',
  ])) : 'None.');

  para('## Functions');
  para('`definer`: runs as the owner (its privileges, and RLS as it applies to the owner); `invoker`: as the caller. '
    + '`EXECUTE`: the roles that may call it besides the owner (PUBLIC: everyone). `settings`: `SET` clauses of the function.');
  for (const schema of SCHEMAS) {
    const fs = functions.filter((f) => f.schema === schema);
    if (!fs.length) continue;
    para(`### ${schema}`);
    para(table(['function', 'security', 'volatility', 'EXECUTE', 'settings'], fs.map((f) => {
      const who = effectiveGrants(f).map(([g, p]) => role(ctx, g) + (p.get('EXECUTE') ? '*' : '')
        + ([...p.keys()].some((k) => k !== 'EXECUTE') ? ` (${privList(p)})` : ''));
      const name = `${KINDS[f.kind] ?? `${f.kind} `}${code(`${f.schema}.${f.name}(${f.args})`)}`;
      return [name + (ownerNote(ctx, f.owner) ? ` (${ownerNote(ctx, f.owner)})` : ''), f.definer ? 'definer' : 'invoker',
        VOLATILITY[f.volatility] ?? f.volatility, who.join(', ') || '—', (f.config ?? []).map(code).join(', ') || '—'];
    })));
  }
  return out.join('\n').replace(/\n+$/, '\n');
}

/** The document for the database `sql` is connected to. */
export async function databaseDoc(sql: postgres.Sql, opts: DocOptions = {}): Promise<string> {
  return renderDoc(await readCatalog(sql), opts);
}

if (isMain(import.meta.url) && process.argv[2] === '--citus') {
  // `make dbdoc-citus`: a local cluster (scripts/citus.ts), a database migrated there, its catalogue.
  const missing = citusMissing();
  if (missing) {
    console.error(missing);
    process.exit(2);
  }
  const cluster = await startCluster();
  const name = `svc_dbdoc_${process.pid}`;
  try {
    const url = await createClusterDatabase(cluster, name);
    await migrate(url);
    const db = postgres(url, { max: 1, onnotice: () => {} });
    try {
      writeFileSync(CITUS_DOC_PATH, await databaseDoc(db));
      console.log(`wrote ${CITUS_DOC_PATH}`);
    } finally {
      await db.end();
    }
  } finally {
    await dropClusterDatabase(cluster, name);
    await cluster.stop();
  }
} else if (isMain(import.meta.url)) {
  // Like scripts/test.ts: a scratch database migrated from db/migrations, dropped afterwards.
  const { url: server, embedded } = await serverUrl('pg-dev', embeddedPort('dev'));
  const name = `svc_dbdoc_${process.pid}`;
  const root = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await migrate(withDatabase(server, name));
    const db = postgres(withDatabase(server, name), { max: 1, onnotice: () => {} });
    try {
      const doc = await databaseDoc(db);
      mkdirSync('docs', { recursive: true });
      writeFileSync(DOC_PATH, doc);
      console.log(`wrote ${DOC_PATH}`);
    } finally {
      await db.end();
    }
  } finally {
    await root.unsafe(`drop database if exists ${name} with (force)`);
    await root.end();
    await embedded?.stop();
  }
}
