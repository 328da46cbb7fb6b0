// The types of the functions in schema api, read from the catalog: their arguments (names, types,
// defaults, VARIADIC) and what they return (a row type, or a value). kysely-codegen types the
// views; it does not read functions. scripts/codegen.ts writes both files.
import postgres from 'postgres';
import { SUPERUSER_SESSION } from './db.ts';

export const FUNCTIONS_FILE = 'src/db/functions.ts';

interface Catalog {
  name: string;
  identity: string;
  result: string;
  overloaded: boolean;
  args: { name: string; type: string; element: string; array: boolean }[];
  defaults: number;
  variadic: boolean;
  retset: boolean;
  ret: { type: string; element: string; array: boolean; kind: string };
  columns: { name: string; element: string; array: boolean }[] | null;
}

/** A result column's or a value's type as postgres.js reads it (bigint and numeric as text). */
const READ: Record<string, string> = {
  text: 'string', varchar: 'string', name: 'string', citext: 'string', uuid: 'string', interval: 'string',
  int2: 'number', int4: 'number', float4: 'number', float8: 'number', int8: 'string', numeric: 'string',
  bool: 'boolean', json: 'Json', jsonb: 'Json', timestamptz: 'Date', timestamp: 'Date', date: 'Date', bytea: 'Buffer',
};
/** An argument's type as the driver sends it. */
const WRITE: Record<string, string> = {
  text: 'string', varchar: 'string', name: 'string', citext: 'string', uuid: 'string', interval: 'string',
  int2: 'number', int4: 'number', float4: 'number', float8: 'number', int8: 'number | string | bigint', numeric: 'string',
  bool: 'boolean', json: 'unknown', jsonb: 'unknown', timestamptz: 'string | Date', timestamp: 'string | Date', date: 'string',
  bytea: 'Uint8Array',
};

function tsType(map: Record<string, string>, element: string, array: boolean, where: string): string {
  const t = map[element];
  if (!t) throw new Error(`codegen: no TypeScript type for ${element} (${where})`);
  const item = t.includes(' ') ? `(${t})` : t;
  return array ? (map === WRITE ? `readonly ${item}[]` : `(${t} | null)[]`) : t;
}

export async function functionsFile(url: string): Promise<string> {
  const sql = postgres(url, SUPERUSER_SESSION);
  let rows: Catalog[];
  try {
    rows = await sql<Catalog[]>`
      select p.proname as name, pg_catalog.pg_get_function_identity_arguments(p.oid) as identity,
             pg_catalog.pg_get_function_result(p.oid) as result,
             pg_catalog.count(*) over (partition by p.proname) > 1 as overloaded,
             coalesce((select pg_catalog.json_agg(pg_catalog.json_build_object('name', a.name, 'type', pg_catalog.format_type(a.oid, null),
                                'element', coalesce(e.typname, t.typname), 'array', e.oid is not null) order by a.n)
                         from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                                     coalesce(p.proargmodes, pg_catalog.array_fill('i'::"char", array[p.pronargs::integer])),
                                     coalesce(p.proargnames, pg_catalog.array_fill(''::text, array[p.pronargs::integer])))
                                with ordinality a(oid, mode, name, n)
                         join pg_catalog.pg_type t on t.oid = a.oid
                         left join pg_catalog.pg_type e on e.oid = t.typelem and t.typcategory = 'A'
                        where a.mode in ('i', 'b', 'v')), '[]') as args,
             p.pronargdefaults as defaults, p.provariadic <> 0 as variadic, p.proretset as retset,
             (select pg_catalog.json_build_object('type', pg_catalog.format_type(t.oid, null), 'element', coalesce(e.typname, t.typname),
                       'array', e.oid is not null, 'kind', t.typtype)
                from pg_catalog.pg_type t left join pg_catalog.pg_type e on e.oid = t.typelem and t.typcategory = 'A'
               where t.oid = p.prorettype) as ret,
             coalesce(
               (select pg_catalog.json_agg(pg_catalog.json_build_object('name', a.name, 'element', coalesce(e.typname, t.typname),
                         'array', e.oid is not null) order by a.n)
                  from unnest(p.proallargtypes, p.proargmodes, p.proargnames) with ordinality a(oid, mode, name, n)
                  join pg_catalog.pg_type t on t.oid = a.oid
                  left join pg_catalog.pg_type e on e.oid = t.typelem and t.typcategory = 'A'
                 where a.mode in ('o', 't', 'b')),
               (select pg_catalog.json_agg(pg_catalog.json_build_object('name', c.attname, 'element', coalesce(e.typname, t.typname),
                         'array', e.oid is not null) order by c.attnum)
                  from pg_catalog.pg_type r join pg_catalog.pg_attribute c on c.attrelid = r.typrelid
                  join pg_catalog.pg_type t on t.oid = c.atttypid
                  left join pg_catalog.pg_type e on e.oid = t.typelem and t.typcategory = 'A'
                 where r.oid = p.prorettype and r.typtype = 'c' and c.attnum > 0 and not c.attisdropped)) as columns
        from pg_catalog.pg_proc p
       where p.pronamespace = 'api'::regnamespace and p.prokind = 'f'
         -- The test fixtures' own (test/fixtures), in the databases the tests clone.
         and p.proname not like 'test\_%'
       order by p.proname collate "C", pg_catalog.pg_get_function_identity_arguments(p.oid) collate "C"`;
  } finally {
    await sql.end();
  }
  const entries: string[] = [];
  const casts: string[] = [];
  for (const f of rows) {
    // An overloaded function is named by its signature: api.call('f(text, integer)', …).
    const name = f.overloaded ? `${f.name}(${f.args.map((a) => a.type).join(', ')})` : f.name;
    const where = `api.${f.name}(${f.identity})`;
    // A function of rows whose columns only its caller names (`as r(…)`) cannot be called typed.
    if (!f.columns && f.ret.element === 'record') continue;
    const args = f.args.map((a, i) => {
      const optional = i >= f.args.length - f.defaults ? '?' : '';
      // A VARIADIC argument's items are parameters of their own: an array, never null.
      if (f.variadic && i === f.args.length - 1) return `${a.name || `arg${i + 1}`}: ${tsType(WRITE, a.element, true, where)}`;
      return `${a.name || `arg${i + 1}`}${optional}: Arg<${tsType(WRITE, a.element, a.array, where)}>`;
    });
    let result: string;
    if (f.columns) {
      result = `row: { ${f.columns.map((c) => `${c.name}: ${tsType(READ, c.element, c.array, where)} | null`).join('; ')} }`;
    } else if (f.ret.element === 'void') {
      result = 'value: void';
    } else {
      result = `value: ${tsType(READ, f.ret.element, f.ret.array, where)} | null`;
    }
    const key = /^[a-z_][a-z0-9_]*$/.test(name) ? name : JSON.stringify(name);
    entries.push(`  /** api.${f.name}(${f.identity}) returns ${f.result.replace(/\*\//g, '* /')} */\n`
      + `  ${key}: { args: [${args.join(', ')}]; ${result}${f.retset ? '; set: true' : ''} };`);
    const types = f.args.map((a, i) => (f.variadic && i === f.args.length - 1 ? `variadic ${a.type}` : a.type));
    casts.push(`  ${key}: { name: ${JSON.stringify(f.name)}, types: ${JSON.stringify(types)} },`);
  }
  return `/**
 * Generated by scripts/codegen.ts (make codegen) from the migrated catalog: the arguments and
 * results of the functions in schema api. Do not edit; src/db/api.ts calls them.
 */

import type { Expression } from 'kysely';
import type { Json } from './schema.ts';

/** An argument: a value (null for SQL null), or an expression of the statement that calls it. */
type Arg<T> = T | null | Expression<T | null>;

export interface ApiFunctions {
${entries.join('\n')}
}

/** Each function's name and its arguments' SQL types, which a call casts its parameters to. */
export const API_FUNCTIONS = {
${casts.join('\n')}
} as const satisfies Record<keyof ApiFunctions, { name: string; types: readonly string[] }>;
`;
}
