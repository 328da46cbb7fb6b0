// On a Citus cluster (docs/scaling.md), each statement of a request runs in the worker that holds
// its organization's rows: the organization is named where the request reaches the database
// (Database.of), and each statement is routed by it. On the API's own connections to that worker (ClusterRouting.local) a
// one-statement read goes as one server would run it, but that a read of an api view reads the
// worker's copy over the organization's shard group (shardStatements).
//
// A transaction's statements, and every statement through the coordinator (the worker not yet
// known or not reachable, SVC_CLUSTER_DIRECT=off, a shard whose copies just failed), go inside one
// call of api.in_organization(organization, statement, arguments), which Citus delegates by the
// organization, every call of a transaction to the same worker backend, where begin_request signed
// the context. The call runs as the runtime role: it grants nothing the runtime role does not have.
// What changes in such a statement (nothing else does):
// - its parameters become elements of one text array, `$n` read as `($1[n]::type)` with the type
//   PostgreSQL gave the parameter, sent as the driver would have serialized them;
// - a read of an api view `api.tasks` becomes `api.tasks()`, the function that returns the view's
//   rows of the request's organization (a view's shard query would run as its reader, who may read
//   no table);
// - its result columns are declared to the call with the types PostgreSQL described.
// The descriptions are read once per statement text (every node has the same schema): a
// transaction's on its own connection, a one-statement read's on a connection of their own.
import postgres from 'postgres';

/** Transaction control goes to the coordinator as it is: Citus makes it the workers' too. */
const CONTROL = /^\s*(begin|commit|rollback|savepoint|release|start transaction)\b/i;
/** The statement texts kept with their descriptions (a bounded set: statements are built from shapes). */
const PLANS_KEPT = 5000;
/** pg_type's `void`: what a function that returns nothing gives a statement's column. */
const VOID = 2278;

export interface Described {
  types: number[];
  columns: { name: string; type: number }[];
}

/** The connection a transaction's statements are described on: its own. Another connection's
 * description would wait, behind a pooler in transaction mode (PgBouncer), for a server connection
 * that transactions waiting for their descriptions may all hold. */
export interface Describer {
  describe(query: string, parameters: unknown[]): Promise<Described>;
  /** A catalog read's rows. */
  rows<T>(query: string, parameters: unknown[]): Promise<T[]>;
}

export interface ClusterRouting {
  /** The statement to send in place of `query` for `organization`'s request, or undefined to send
   * it as it is (no organization: outside a request, or before its token is verified). `read`: a
   * one-statement read of the pools (not a statement of a transaction). `on`: the transaction's
   * connection, where its statements are described. */
  route(query: string, parameters: unknown[], organization: string | undefined, read?: boolean, on?: Describer):
    Promise<Routed | undefined> | Routed | undefined;
  /** The worker (`host:port`, as pg_dist_node names it) that holds the shard group of the
   * request's organization, once known: the request's connections may be taken there, so that its
   * statements run where its rows are and the coordinator is out of its path. Undefined: through
   * the coordinator (outside a request, before its placement is known, or when it is the
   * coordinator's). */
  node?(organization: string): string | undefined;
  /** The workers that hold a shard group now (`host:port`, as `node` names them). */
  nodes?(): Set<string>;
  /** The routing of the connections to a worker (`node`): one-statement reads as they are,
   * reading the worker's copies of the api views over the organization's shard group. */
  local?: ClusterRouting;
  /** A statement sent for `shard` as it is failed as one sent to a node that no longer holds the
   * group, or whose copies of the api views are stale or gone: the shard's statements go through
   * api.in_organization (which Citus delegates to wherever the group is) until its placement has
   * been read again. */
  suspect?(shard: string): void;
  /** Ends the connection the descriptions are read on. */
  close?(): Promise<void>;
}

export interface Routed {
  sql: string;
  parameters: unknown[];
  /** The statement returns no rows: the call answers its row count, and `command` is its own. */
  count?: { command: string };
  /** Sent as it is to the worker of this shard's group (ClusterRouting.local). */
  shard?: string;
}

interface Plan {
  sql: string;
  inner: string;
  types: number[];
  count?: { command: string };
}

/** Splits SQL text into code and the parts that are not code (string literals, quoted
 * identifiers, comments, dollar-quoted bodies), so that rewriting touches code only. */
export function codeSegments(text: string): { code: boolean; ident?: boolean; text: string }[] {
  const out: { code: boolean; ident?: boolean; text: string }[] = [];
  let i = 0;
  let start = 0;
  const push = (code: boolean, end: number) => {
    if (end > start) out.push(text[start] === '"' && !code ? { code, ident: true, text: text.slice(start, end) } : { code, text: text.slice(start, end) });
    start = end;
  };
  while (i < text.length) {
    const c = text[i]!;
    let end = -1;
    if (c === "'" || c === '"') {
      end = i + 1;
      for (;;) {
        const j = text.indexOf(c, end);
        if (j < 0) { end = text.length; break; }
        if (text[j + 1] === c) { end = j + 2; continue; }
        end = j + 1;
        break;
      }
    } else if (c === '-' && text[i + 1] === '-') {
      const j = text.indexOf('\n', i);
      end = j < 0 ? text.length : j + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const j = text.indexOf('*/', i + 2);
      end = j < 0 ? text.length : j + 2;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_][A-Za-z0-9_]*\$|^\$\$/.exec(text.slice(i));
      if (tag && !/[\w]/.test(text[i - 1] ?? '')) {
        const j = text.indexOf(tag[0], i + tag[0].length);
        end = j < 0 ? text.length : j + tag[0].length;
      }
    }
    if (end < 0) { i++; continue; }
    push(true, i);
    start = i;
    push(false, end);
    i = end;
  }
  push(true, text.length);
  return out;
}

/** postgres.js's own guess of a parameter's type, which decides how PostgreSQL describes it. */
function kindOf(x: unknown): string {
  if (x instanceof Date) return 'd';
  if (x instanceof Uint8Array) return 'b';
  if (x === true || x === false) return 'o';
  if (typeof x === 'bigint') return 'i';
  if (Array.isArray(x)) return x.length ? `[${kindOf(x[0])}` : '[';
  return '_';
}

/** A reference to one of the api views `views` in code (`api.tasks`, `"api"."tasks"`), not a call of
 * the function of the same name nor part of a longer name: groups 1 (what precedes it) and 3 (the view). */
const viewReference = (views: string[]) =>
  new RegExp(`(^|[^\\w."])(?:"api"|api)\\.("?)(${views.join('|')})\\2(?![\\w"(])`, 'g');

export function clusterRouting(opts: {
  describe(query: string, parameters: unknown[], on?: Describer): Promise<Described>;
  typeNames(oids: number[], on?: Describer): Promise<Map<number, string>>;
  serializers: Record<number, (x: unknown) => string>;
  views: string[];
}): ClusterRouting {
  const plans = new Map<string, Promise<Plan>>();
  const viewRef = viewReference(opts.views);
  const build = async (query: string, parameters: unknown[], on?: Describer): Promise<Plan> => {
    const described = await opts.describe(query, parameters, on);
    const names = await opts.typeNames([...new Set([...described.types, ...described.columns.map((c) => c.type)])], on);
    const typeName = (oid: number) => {
      const name = names.get(oid);
      if (!name) throw new Error(`cluster routing: no name for type ${oid}`);
      return name;
    };
    // Parameters are replaced in code only; view names also where they are quoted (Kysely quotes them).
    let inner = '';
    let run = '';
    const views = (text: string) => text.replace(viewRef, (_m, before: string, _q: string, view: string) => `${before}api.${view}()`);
    for (const segment of codeSegments(query)) {
      if (segment.code) {
        run += segment.text.replace(/\$(\d+)(?!\w)/g, (_m, n: string) => `($1[${n}]::${typeName(described.types[Number(n) - 1]!)})`);
      } else if (segment.ident) {
        run += segment.text;
      } else {
        inner += views(run) + segment.text;
        run = '';
      }
    }
    inner += views(run);
    if (described.columns.length === 0) {
      const command = (/^\s*(?:with\b[\s\S]*?\)\s*)?(\w+)/i.exec(query)?.[1] ?? 'SELECT').toUpperCase();
      return { sql: 'select api.in_organization_count($1, $2, $3::text[]) as count', inner, types: described.types, count: { command } };
    }
    // Duplicate names (postgres.js keeps the last one's value): the earlier ones are renamed.
    const last = new Map(described.columns.map((c, i) => [c.name, i]));
    const columns = described.columns.map((c, i) =>
      `${last.get(c.name) === i ? quoteIdent(c.name) : `"?dup${i}"`} ${c.type === VOID ? 'text' : typeName(c.type)}`);
    // A column of a function returning void (a check, a completion) cannot be declared: the
    // statement is read as a subquery whose columns are named by position, that one as text (null).
    const wrapped = described.columns.some((c) => c.type === VOID)
      ? `select ${described.columns.map((c, i) => `q.c${i}${c.type === VOID ? '::text' : ''}`).join(', ')} from (${inner}) as q(${described.columns.map((_c, i) => `c${i}`).join(', ')})`
      : inner;
    return { sql: `select * from api.in_organization($1, $2, $3::text[]) as r(${columns.join(', ')})`, inner: wrapped, types: described.types };
  };
  const planned = (key: string, body: string, parameters: unknown[], on?: Describer) => {
    if (plans.size >= PLANS_KEPT) plans.delete(plans.keys().next().value!);
    const plan = build(body, parameters, on);
    plans.set(key, plan);
    plan.catch(() => { if (plans.get(key) === plan) plans.delete(key); });
    return plan;
  };
  return {
    route(query, parameters, organization, _read, on) {
      if (organization === undefined || CONTROL.test(query)) return undefined;
      return (async () => {
        const prefix = /^\/\* svc:[a-z-]+ \*\/ /.exec(query)?.[0] ?? '';
        const body = query.slice(prefix.length);
        const key = parameters.map(kindOf).join(',') + '\n' + body;
        const shared = plans.get(key);
        // A plan another request is describing fails with that request's connection or
        // transaction: this one then describes the statement itself.
        const p = shared
          ? await shared.catch(() => plans.get(key) ?? planned(key, body, parameters, on))
          : await planned(key, body, parameters, on);
        const args = parameters.map((x, i) => {
          if (x === null || x === undefined) return null;
          const serialize = opts.serializers[p.types[i]!];
          return serialize ? serialize(x) : '' + x;
        });
        return { sql: prefix + p.sql, parameters: [organization, p.inner, args], count: p.count };
      })();
    },
  };
}

/** How long a group's node is taken as known: a request sent to a node its group has left is
 * still answered (Citus forwards the call to the group's node), only slower. */
export const PLACEMENTS_REFRESH_MS = 2000;
/** Organizations whose shard is kept (Map order: the oldest goes first). */
const SHARDS_KEPT = 100_000;
/** Organizations looked up at once, and waiting for a lookup at most. */
const LOOKUP_BATCH = 100;
const LOOKUPS_WAITING = 1000;

/** Where each organization's shard group is: its shard (which does not change: a shard moves
 * whole) looked up once, in batches, off the request's path; each shard's node read
 * again from pg_dist_placement every `refreshMs`. `node` answers from memory only. */
export function placements(read: {
  /** The shard of each organization (Citus's get_shard_id_for_distribution_column). */
  shards(organizations: string[]): Promise<Map<string, string>>;
  /** The node of each shard, null for the coordinator's. */
  nodes(): Promise<Map<string, string | null>>;
}, refreshMs = PLACEMENTS_REFRESH_MS) {
  const shardOf = new Map<string, string>();
  let nodeOf = new Map<string, string | null>();
  const wanted = new Set<string>();
  let looking = false;
  const lookUp = async () => {
    try {
      while (wanted.size > 0) {
        const batch = [...wanted].slice(0, LOOKUP_BATCH);
        const found = await read.shards(batch);
        for (const o of batch) wanted.delete(o);
        for (const [o, shard] of found) {
          if (shardOf.size >= SHARDS_KEPT) shardOf.delete(shardOf.keys().next().value!);
          shardOf.set(o, shard);
        }
      }
    } catch {
      // Asked again by the organization's next request.
      wanted.clear();
    } finally {
      looking = false;
    }
  };
  // Started on the next turn: the organizations of requests that arrive together go in one batch.
  const look = () => {
    if (looking) return;
    looking = true;
    setImmediate(() => void lookUp());
  };
  let refreshing: Promise<void> | undefined;
  const refresh = () => {
    refreshing ??= read.nodes().then((m) => { nodeOf = m; }, () => undefined).finally(() => { refreshing = undefined; });
    return refreshing;
  };
  const timer = setInterval(() => void refresh(), refreshMs);
  timer.unref();
  return {
    ready: refresh,
    refresh,
    /** The organization's shard, once looked up. */
    shard: (organization: string): string | undefined => shardOf.get(organization),
    /** The workers that hold a shard group, as last read. */
    nodes: (): Set<string> => new Set([...nodeOf.values()].filter((n): n is string => n !== null)),
    node(organization: string): string | undefined {
      const shard = shardOf.get(organization);
      // Unknown, or a shard that no longer exists (split, or an organization isolated to a shard
      // of its own): looked up.
      if (shard === undefined || (nodeOf.size > 0 && !nodeOf.has(shard))) {
        shardOf.delete(organization);
        if (wanted.size < LOOKUPS_WAITING) wanted.add(organization);
        look();
        return undefined;
      }
      return nodeOf.get(shard) ?? undefined;
    },
    stop: () => clearInterval(timer),
  };
}

/** `placements` read from Citus's catalog on `sql` (any role: the catalog is public). */
export function placementsOn(sql: postgres.Sql, refreshMs = PLACEMENTS_REFRESH_MS): ReturnType<typeof placements> {
  return placements({
    // Citus's own hash of the distribution column (get_shard_id_for_distribution_column asks for
    // a privilege on the table that the runtime role does not have).
    shards: async (organizations) => new Map((await sql<{ organization: string; shard: string }[]>`
      select o as organization, s.shardid::text as shard
        from unnest(${organizations}::text[]) o
        join pg_dist_shard s on s.logicalrelid = 'app.organizations'::regclass
         and worker_hash(o) between s.shardminvalue::int and s.shardmaxvalue::int`).map((r) => [r.organization, r.shard])),
    nodes: async () => new Map((await sql<{ shard: string; node: string | null }[]>`
      select distinct on (s.shardid) s.shardid::text as shard,
             case when n.groupid <> 0 then case when n.nodename like '%:%' then '[' || n.nodename || ']' else n.nodename end || ':' || n.nodeport end as node
        from pg_dist_shard s join pg_dist_placement p using (shardid) join pg_dist_node n on n.groupid = p.groupid
       where s.logicalrelid = 'app.organizations'::regclass and n.noderole = 'primary' and n.isactive
       order by s.shardid, n.nodeid`).map((r) => [r.shard, r.node])),
  }, refreshMs);
}

interface TypeName { oid: number; name: string }

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** The routing for a database that is a Citus coordinator, or undefined for one server. A
 * transaction's statements are described on its own connection (Describer); a one-statement read's
 * and the placements on a connection of their own (as the runtime role, bounded by the statement
 * timeout), which no request holds while it waits for them. */
export async function clusterRoutingFor(url: string,
  opts: { statementTimeoutMs?: number; connectTimeoutMs?: number; direct?: boolean; prepare?: boolean } = {}): Promise<ClusterRouting | undefined> {
  const sql = postgres(url, {
    // Named prepared statements as the pools have them: off behind a pooler in transaction mode,
    // where the next statement may reach another server connection.
    max: 1, onnotice: () => {}, idle_timeout: 60, prepare: opts.prepare ?? true,
    connect_timeout: Math.max(1, Math.ceil((opts.connectTimeoutMs ?? 5000) / 1000)),
    connection: { application_name: 'svc-api-describe', statement_timeout: opts.statementTimeoutMs ?? 5000 },
  });
  const [citus] = await sql<{ on: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as on`
    .catch(async (e) => { await sql.end(); throw e; });
  if (!citus?.on) {
    await sql.end();
    return undefined;
  }
  const views = (await sql<{ name: string }[]>`
    select c.relname as name from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind = 'v'`).map((r) => r.name);
  const known = new Map<number, string>();
  const routing = clusterRouting({
    views,
    serializers: sql.options.serializers as Record<number, (x: unknown) => string>,
    // Bounded here too: a pooler in transaction mode (PgBouncer) drops the statement_timeout start-up parameter.
    describe: async (query, parameters, on) => {
      if (on) return on.describe(query, parameters);
      const bound = opts.statementTimeoutMs ?? 5000;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error(`a statement's description took longer than ${bound} ms`), { code: '57014' })), bound);
      });
      try {
        const d = await Promise.race([sql.unsafe(query, parameters as postgres.ParameterOrJSON<never>[]).describe(), late]);
        return { types: d.types, columns: d.columns.map((c) => ({ name: c.name, type: c.type })) };
      } finally {
        clearTimeout(timer);
      }
    },
    typeNames: async (oids, on) => {
      const missing = oids.filter((o) => !known.has(o));
      if (missing.length) {
        const query = `select oid::int as oid, format_type(oid, null) as name from pg_type where oid = any(string_to_array($1, ',')::oid[])`;
        const rows = on ? await on.rows<TypeName>(query, [missing.join(',')])
          : await sql.unsafe<TypeName[]>(query, [missing.join(',')]);
        for (const r of rows) known.set(r.oid, r.name);
      }
      return known;
    },
  });
  if (opts.direct === false) return { route: routing.route, close: () => sql.end({ timeout: 5 }) };
  const where = placementsOn(sql);
  await where.ready();
  const suspects = new Map<string, number>();
  const onShard = shardStatements(views);
  const suspect = (shard: string) => {
    if (!suspects.has(shard)) void where.refresh();
    suspects.set(shard, Date.now() + SUSPECT_MS);
  };
  return {
    route: routing.route,
    node: (organization) => where.node(organization),
    nodes: () => where.nodes(),
    local: {
      route(query, parameters, organization, read, on) {
        if (organization === undefined || CONTROL.test(query)) return undefined;
        // A transaction's statements go through api.in_organization: its first call may be
        // forwarded (a node that just lost the group sends a delegated call to the group's node, and
        // begin_request signs the context there), and every later one must follow it, as the
        // wrapped calls do; a transaction has no one place to run again from either.
        if (!read) return routing.route(query, parameters, organization, read, on);
        const shard = where.shard(organization);
        if (shard === undefined) return routing.route(query, parameters, organization);
        const until = suspects.get(shard);
        if (until !== undefined) {
          if (until > Date.now()) return routing.route(query, parameters, organization);
          suspects.delete(shard);
        }
        return { sql: onShard(query, shard), parameters, shard };
      },
      suspect,
    },
    suspect,
    close: () => { where.stop(); return sql.end({ timeout: 5 }); },
  };
}

/** How long a shard's statements go through api.in_organization after one sent as it is failed. */
const SUSPECT_MS = 2 * PLACEMENTS_REFRESH_MS;

/** A one-statement read as it is sent to the worker that holds its organization's shard group: its
 * reads of api views read the worker's copies over that group (`api_shard_<shard>.<view>`, made by
 * app_private.shard_views_create: the view's text with each distributed table replaced by its
 * shard), which PostgreSQL plans as local tables; everything else as it is. Such a read calls
 * begin_request in a CTE, which Citus never forwards: on a node that does not hold the group it
 * fails (its reads reach the group's node as svc_gate, which may not log in), as does a copy that
 * is stale or left there (SV500), and the read goes again through api.in_organization
 * (ClusterRouting.suspect). Each text is split once around its view names. */
export function shardStatements(views: string[]): (query: string, shard: string) => string {
  const viewRef = viewReference(views);
  const split = new Map<string, string[]>();
  return (query, shard) => {
    let parts = split.get(query);
    if (!parts) {
      let text = '';
      let run = '';
      const mark = (code: string) => code.replace(viewRef, (_m, before: string, _q: string, view: string) => `${before}\u0000${view}`);
      for (const segment of codeSegments(query)) {
        if (segment.code || segment.ident) run += segment.text;
        else { text += mark(run) + segment.text; run = ''; }
      }
      parts = (text + mark(run)).split('\u0000');
      if (split.size >= PLANS_KEPT) split.delete(split.keys().next().value!);
      split.set(query, parts);
    }
    return parts.length === 1 ? query : parts.join(`api_shard_${shard}.`);
  };
}
