// The data rules that triggers keep, driven as the owner with plain SQL (state triggers and
// invoice totals must work on distributed tables too): task workflows and dependency cycles,
// invoice totals, the issuing rules. On one server and, under `make test-citus`, on the cluster,
// where each trigger runs in its row's shard and every statement in it names the organization.
import t from 'tap';
import { startApp, CITUS_WORKERS } from '../helpers/app.ts';
import { failure } from '../helpers/sql.ts';

const where = CITUS_WORKERS.length ? 'on the Citus cluster' : 'on one server';

t.test(`task workflows and dependencies (${where})`, async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const sql = a.admin;
  // The default workflow every organization starts with: todo → in_progress | blocked | done | cancelled, done → todo.
  const [wf] = await sql`select id, 'todo' as status from app.task_workflows where organization_id = ${org} and is_default`;
  const [project] = await sql`insert into app.projects (organization_id, code, name, currency) values (${org}, 'P', 'P', 'EUR') returning id`;
  const task = async (name: string) => (await sql`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${org}, ${project!.id}, ${wf!.id}, ${name}, ${wf!.status}) returning id`)[0]!.id as string;
  const [t1, t2, t3] = [await task('one'), await task('two'), await task('three')];
  t.equal(await failure(sql`insert into app.tasks (organization_id, project_id, workflow_id, name, status)
    values (${org}, ${project!.id}, ${wf!.id}, 'late', 'done')`), 'SVV23 INVALID_TRANSITION', 'a task starts in the initial status');
  t.equal(await failure(sql`update app.tasks set status = 'done' where organization_id = ${org} and id = ${t1}`), 'ok', 'todo → done');
  t.equal(await failure(sql`update app.tasks set status = 'blocked' where organization_id = ${org} and id = ${t1}`),
    'SVV23 INVALID_TRANSITION', 'done → blocked: no transition leads there');
  t.equal(await failure(sql`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id) values (${org}, ${t2}, ${t1})`), 'ok');
  t.equal(await failure(sql`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id) values (${org}, ${t3}, ${t2})`), 'ok');
  t.equal(await failure(sql`insert into app.task_dependencies (organization_id, task_id, predecessor_task_id) values (${org}, ${t1}, ${t3})`),
    'SVV24 DEPENDENCY_CYCLE', 'a cycle through two steps is refused');
  t.equal(await failure(sql`update app.tasks set archived_at = now() where organization_id = ${org} and id = ${t1}`),
    'SVC16 TASK_ARCHIVE_BLOCKED', 'a task that open tasks depend on is not archived');
  t.equal(await failure(sql`update app.tasks set archived_at = now() where organization_id = ${org} and id = ${t3}`), 'ok', 'a task nothing depends on is');
});

t.test(`invoice totals and issuing (${where})`, async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const client = await a.createClient(org);
  const sql = a.admin;
  await sql`insert into app.customers (organization_id, id, kind, name) values (${org}, 'cus_rules', 'billing', 'C')`;
  const [inv] = await sql`insert into app.invoices (organization_id, customer_id, currency, created_by_client_id)
    values (${org}, 'cus_rules', 'EUR', ${client.id}) returning id, scale, status`;
  t.match(inv, { scale: 2, status: 'draft' }, 'a draft in euros (scale from the currencies reference table)');
  t.equal(await failure(sql`update app.invoices set status = 'sent' where organization_id = ${org} and id = ${inv!.id}`),
    'SVC09 WORKFLOW_BLOCKED', 'an invoice without lines is not issued');
  for (const [n, qty, price, rate] of [[1, '3', '10.50', '19'], [2, '1', '0.99', '7']] as const) {
    await sql`insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate, amount, tax_amount)
      values (${org}, ${inv!.id}, ${n}, 'line', ${qty}, ${price}, ${rate}, 0, 0)`;
  }
  const [totals] = await sql`select subtotal::text, tax_total::text, total::text from app.invoices where organization_id = ${org} and id = ${inv!.id}`;
  t.same(totals, { subtotal: '32.49', tax_total: '6.06', total: '38.55' }, 'the totals follow the lines (31.50 + 0.99; tax 5.985 → 5.99 and 0.0693 → 0.07)');
  await sql`delete from app.invoice_lines where organization_id = ${org} and invoice_id = ${inv!.id} and position = 2`;
  const [after] = await sql`select total::text from app.invoices where organization_id = ${org} and id = ${inv!.id}`;
  t.equal(after!.total, '37.49', 'and a deleted line leaves them');
  const issued = await failure(sql.begin((tx) => tx`update app.invoices set status = 'sent' where organization_id = ${org} and id = ${inv!.id}`));
  if (CITUS_WORKERS.length) {
    // The check is deferred to commit, which on Citus happens on the worker: the commit fails, but
    // Citus reports only that (docs/scaling.md: a delegated call will run its deferred checks first).
    t.match(issued, /could not commit transaction/, 'no invoice is issued without its PDF (checked at commit)');
  } else {
    t.equal(issued, 'SVC09 WORKFLOW_BLOCKED', 'no invoice is issued without its PDF (checked at commit)');
  }
  const [still] = await sql`select status from app.invoices where organization_id = ${org} and id = ${inv!.id}`;
  t.equal(still!.status, 'draft', 'it is still a draft');
});
