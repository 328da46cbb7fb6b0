// The helpers every request runs are single SQL expressions that the planner inlines into the
// statement calling them (migration 20261207020000): no call is left, and read_flags answers as its
// former text, with a FROM clause, did for every combination of its arguments.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { oneConnection } from '../helpers/sql.ts';

t.test('read_flags and iso_timestamp are inlined, and read_flags answers as before', async (t) => {
  const { adminUrl } = await createTestDatabase(t);
  const sql = postgres(adminUrl, oneConnection);
  t.teardown(() => sql.end());
  const plan = async (expression: string) =>
    (await sql.unsafe(`explain (verbose, costs off) select ${expression} from (values (1)) v(x)`)).map((r) => r['QUERY PLAN'] as string).join('\n');
  t.notMatch(await plan(`app_private.read_flags(array['member', 'hr'], x = 1, false, x = 2, true)`), /read_flags/, 'read_flags leaves no call');
  t.notMatch(await plan(`app_private.iso_timestamp(now() - x * interval '1 day')`), /iso_timestamp/, 'iso_timestamp leaves no call');
  t.equal((await sql`select app_private.iso_timestamp('2026-12-07 03:04:05.678+02') as s`)[0]!.s, '2026-12-07T01:04:05.678Z');

  await sql.unsafe(`create function pg_temp.read_flags_before(p_roles text[], p_ticket_module boolean, p_finance_tickets boolean,
      p_hr_tickets boolean, p_hr_time_entries boolean) returns text language sql immutable as $$
    select concat_ws(',',
      case when v_tickets then 'tickets' end,
      case when v_tickets and p_roles && '{member,manager}'::text[] then 'internal_notes' end,
      case when p_roles && '{manager,finance}'::text[] or ('hr' = any (p_roles) and p_hr_time_entries) then 'time_entries' end)
      from (select coalesce(p_ticket_module and (p_roles && '{member,manager}'::text[]
                                                or ('finance' = any (p_roles) and p_finance_tickets)
                                                or ('hr' = any (p_roles) and p_hr_tickets)), false) as v_tickets) x $$`);
  const [r] = await sql`
    with roles as (
      select array(select u.r from unnest(array['member', 'manager', 'finance', 'hr', 'other']) with ordinality u(r, i)
                    where (m >> (u.i::int - 1)) & 1 = 1) as roles
        from generate_series(0, 31) m
      union all select null::text[]),
    b as (select * from (values (true), (false), (null::boolean)) v(x))
    select count(*)::int as combinations,
           count(*) filter (where app_private.read_flags(r.roles, a.x, f.x, h.x, e.x)
                                  is distinct from pg_temp.read_flags_before(r.roles, a.x, f.x, h.x, e.x))::int as different
      from roles r, b a, b f, b h, b e`;
  t.same(r, { combinations: 2673, different: 0 }, 'every subset of the Roles (and none), each flag true, false or null: the same flags');
});
