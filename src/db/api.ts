// The request path's way to the database's api surface, typed from the catalog (`make codegen`):
// the views through Kysely's builder (`build`, `viewExpressions`) and the functions through `api`,
// whose arguments and results are src/db/functions.ts. A renamed view column, a function's changed
// arguments or a renamed result column fail `make typecheck` where they are used.
import {
  DummyDriver, expressionBuilder, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql,
  type Expression, type ExpressionBuilder, type RawBuilder,
} from 'kysely';
import type { DB, Json } from './schema.ts';
import { API_FUNCTIONS, type ApiFunctions } from './functions.ts';

/** Builds queries over the api views; they run inside the statements that carry the request's
 * context (README "Adding an endpoint"), never from here. */
export const build = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export type View = keyof DB;
/** Column references and conditions over one view, typed by its columns. */
export const viewExpressions = <V extends View>(): ExpressionBuilder<DB, V> => expressionBuilder<DB, V>();

/** The PostgreSQL types a declared row names, as postgres.js reads them. */
interface ReadAs { text: string; bool: boolean; int4: number; jsonb: Json; void: null }
/** The columns of a statement that computes them (neither a view's nor a function's), declared by
 * name and type: test/db/declared-rows.test.ts checks each against what PostgreSQL describes. */
export type Declared<C extends Record<string, keyof ReadAs>> = { [K in keyof C]: ReadAs[C[K]] | null };

type Fn = keyof ApiFunctions;
type RowFn = { [F in Fn]: ApiFunctions[F] extends { row: unknown } ? F : never }[Fn];
type ValueFn = { [F in Fn]: ApiFunctions[F] extends { value: unknown } ? F : never }[Fn];
/** The row a function returns, its columns as the catalog types them (nullable). */
export type RowOf<F extends Fn> = ApiFunctions[F] extends { row: infer R } ? R : never;
export type ValueOf<F extends Fn> = ApiFunctions[F] extends { value: infer V } ? V : never;
/** The same row with the columns the function always sets. */
export type SetRow<F extends RowFn, K extends keyof RowOf<F> = keyof RowOf<F>> =
  Omit<RowOf<F>, K> & { [C in K]: NonNullable<RowOf<F>[C]> };

const isExpression = (value: unknown): value is Expression<unknown> =>
  typeof value === 'object' && value !== null && 'toOperationNode' in value;

/** `api.f($1::t1, …)`, each parameter cast to its argument's type (an expression in parentheses);
 * a VARIADIC argument's items as parameters of their own; trailing arguments left undefined are
 * not given, so that their defaults apply. */
function call(fn: Fn, given: readonly unknown[]): RawBuilder<unknown> {
  const { name, types } = API_FUNCTIONS[fn];
  let n = given.length;
  while (n > 0 && given[n - 1] === undefined) n--;
  const parameters = given.slice(0, n).flatMap((value, i) => {
    const type: string = types[i]!;
    if (type.startsWith('variadic ')) return (value as unknown[]).map((item) => sql`${item}::${sql.raw(type.slice('variadic '.length, -2))}`);
    return [isExpression(value) ? sql`(${value})::${sql.raw(type)}` : sql`${value}::${sql.raw(type)}`];
  });
  return sql`api.${sql.raw(name)}(${parameters.length > 0 ? sql.join(parameters) : sql``})`;
}

export const api = {
  /** `api.f(…)` as a FROM item: a function that returns rows, inside a larger statement. */
  table: <F extends RowFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<RowOf<F>> =>
    call(fn, args) as RawBuilder<RowOf<F>>,
  /** `select * from api.f(…)`: the rows of a function that returns rows. */
  rows: <F extends RowFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<RowOf<F>> =>
    sql<RowOf<F>>`select * from ${call(fn, args)}`,
  /** `api.f(…)` as an expression: a value in a select list, or a check. */
  call: <F extends ValueFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<ValueOf<F>> =>
    call(fn, args) as RawBuilder<ValueOf<F>>,
  /** `select api.f(…) as value`. */
  value: <F extends ValueFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<{ value: ValueOf<F> }> =>
    sql<{ value: ValueOf<F> }>`select ${call(fn, args)} as value`,
};
