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
/** Column references and conditions over one view, typed by its columns. The builder holds no state
 * of a query, so one serves every view and request. */
const EXPRESSIONS = expressionBuilder<DB, View>();
export const viewExpressions = <V extends View>(): ExpressionBuilder<DB, V> => EXPRESSIONS as unknown as ExpressionBuilder<DB, V>;

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

/** A call's text around its arguments, made once per function, form and shape (which arguments are
 * expressions): one RawBuilder per call, as a hand-written template is (building a call from nested
 * templates cost a create 45 µs of the server's CPU). */
const templates = new Map<string, TemplateStringsArray>();
type Form = 'call' | 'rows' | 'value';
const AROUND: Record<Form, [string, string]> = { call: ['', ''], rows: ['select * from ', ''], value: ['select ', ' as value'] };

/** `api.f($1::t1, …)`, each parameter cast to its argument's type (an expression in parentheses);
 * a VARIADIC argument's items as parameters of their own; trailing arguments left undefined are
 * not given, so that their defaults apply. */
function call(form: Form, fn: Fn, given: readonly unknown[]): RawBuilder<unknown> {
  const { name, types } = API_FUNCTIONS[fn];
  let n = given.length;
  while (n > 0 && given[n - 1] === undefined) n--;
  const values: unknown[] = [];
  const casts: string[] = [];
  let shape = `${form} ${fn} `;
  for (let i = 0; i < n; i++) {
    const type: string = types[i]!;
    const value = given[i];
    if (type.startsWith('variadic ')) {
      for (const item of value as unknown[]) { values.push(item); casts.push(type.slice('variadic '.length, -2)); shape += 'v'; }
    } else if (isExpression(value)) {
      values.push(value); casts.push(`(${type}`); shape += 'e';
    } else {
      values.push(value); casts.push(type); shape += 'p';
    }
  }
  let strings = templates.get(shape);
  if (!strings) {
    const [before, after] = AROUND[form];
    // Between the parameters: `::type, `; an expression's opening parenthesis ends the text before it.
    const parts = [`${before}api.${name}(`];
    casts.forEach((cast, i) => {
      const expression = cast.startsWith('(');
      if (expression) parts[parts.length - 1] += '(';
      parts.push(`${expression ? ')' : ''}::${expression ? cast.slice(1) : cast}${i < casts.length - 1 ? ', ' : `)${after}`}`);
    });
    if (casts.length === 0) parts[0] += `)${after}`;
    strings = Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray;
    templates.set(shape, strings);
  }
  return sql(strings, ...values);
}

export const api = {
  /** `api.f(…)` as a FROM item: a function that returns rows, inside a larger statement. */
  table: <F extends RowFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<RowOf<F>> =>
    call('call', fn, args) as RawBuilder<RowOf<F>>,
  /** `select * from api.f(…)`: the rows of a function that returns rows. */
  rows: <F extends RowFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<RowOf<F>> =>
    call('rows', fn, args) as RawBuilder<RowOf<F>>,
  /** `api.f(…)` as an expression: a value in a select list, or a check. */
  call: <F extends ValueFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<ValueOf<F>> =>
    call('call', fn, args) as RawBuilder<ValueOf<F>>,
  /** `select api.f(…) as value`. */
  value: <F extends ValueFn>(fn: F, ...args: ApiFunctions[F]['args']): RawBuilder<{ value: ValueOf<F> }> =>
    call('value', fn, args) as RawBuilder<{ value: ValueOf<F> }>,
};
