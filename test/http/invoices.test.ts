// Invoices and payments over HTTP: drafts, lines and totals computed in SQL, If-Match, payments.
// (sendInvoice itself, with SMTP and the PDF, is tested in invoice-send.test.ts.)
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { assertProblem, startApp, type TestApp } from '../helpers/app.ts';

const idem = () => ({ 'idempotency-key': randomUUID() });

async function world(t: Test) {
  const a = await startApp(t);
  const p = await a.principal('manager,finance');
  const customer = (await a.cli('customer', 'create', '--org', p.orgId, '--kind', 'billing', '--name', 'Acme',
    '--email', 'billing@acme.example', '--currency', 'EUR')).customer_id as string;
  const create = (body: Record<string, unknown>, token = p.token) =>
    a.request({ method: 'POST', url: '/v1/invoices', token, headers: idem(), payload: { customer_id: customer, ...body } });
  /** Issued through the API, without an email (the PDF is still made). */
  const issue = async (id: string) => {
    const res = await a.request({ method: 'POST', url: `/v1/invoices/${id}/send`, token: p.token, headers: idem(), payload: { delivery: { email: false } } });
    if (res.statusCode !== 200) throw new Error(res.body);
  };
  return { a, p, customer, create, issue };
}

const pay = (a: TestApp, token: string, body: Record<string, unknown>) =>
  a.request({ method: 'POST', url: '/v1/payments', token, headers: idem(), payload: { currency: 'EUR', received_date: '2026-11-20', method: 'bank_transfer', ...body } });

t.test('drafts: totals computed per line, rounded half-up to the currency, as decimal strings', async (t) => {
  const { a, p, create } = await world(t);
  const res = await create({ lines: [
    { description: 'Consulting', quantity: '1.5', unit_price: '100.05', tax_rate: '19' },
    { description: 'Rounding', quantity: '0.3333', unit_price: '0.10', tax_rate: '7' },
    { description: 'Credit', quantity: '1', unit_price: '-10.00' },
  ] });
  t.equal(res.statusCode, 201, res.body);
  // 1.5 × 100.05 = 150.075 → 150.08; tax 28.5152 → 28.52. 0.03333 → 0.03; tax 0.0021 → 0.00. −10.00.
  t.match(res.json, { object: 'invoice', status: 'draft', number: null, currency: 'EUR', version: 1,
    subtotal: '140.11', tax_total: '28.52', total: '168.63', amount_due: '168.63', amount_paid: '0.00' });
  t.same(res.json.lines.map((l: any) => [l.amount, l.tax_amount]), [['150.08', '28.52'], ['0.03', '0.00'], ['-10.00', '0.00']]);
  t.match(res.json.lines[0], { id: /^invl_/, quantity: '1.5', unit_price: '100.05', tax_rate: '19' });
  t.equal(res.headers.location, `/v1/invoices/${res.json.id}`);

  const jpy = await create({ currency: 'JPY', lines: [{ description: 'x', quantity: '3', unit_price: '333', tax_rate: '10' }] });
  t.match(jpy.json, { currency: 'JPY', subtotal: '999', tax_total: '100', total: '1099' });
  const kwd = await create({ currency: 'KWD', lines: [{ description: 'x', quantity: '1.0005', unit_price: '1.234' }] });
  t.match(kwd.json, { currency: 'KWD', subtotal: '1.235', total: '1.235' });

  const get = await a.request({ url: `/v1/invoices/${res.json.id}`, token: p.token });
  t.equal(get.statusCode, 200);
  t.equal(get.headers.etag, '"1"');
  t.same(get.json, res.json);
  const list = await a.request({ url: '/v1/invoices?currency=JPY', token: p.token });
  t.same(list.json.data.map((i: any) => i.id), [jpy.json.id]);
});

t.test('client amounts and bad lines are rejected, all problems at once', async (t) => {
  const { create } = await world(t);
  const totals = await create({ total: '10.00', lines: [] });
  assertProblem(t, totals, 422, 'VALIDATION_FAILED');
  t.match(totals.json.errors[0], { pointer: '/total' });
  const bad = await create({ lines: [
    { description: 'ok', quantity: '1', unit_price: '1.00', amount: '1.00' },
    { description: '', quantity: '0', unit_price: '1.005', tax_rate: '101' },
    { description: 'float', quantity: 1, unit_price: 2.5 },
  ] });
  assertProblem(t, bad, 422, 'INVALID_INVOICE_LINE');
  t.same(bad.json.errors.map((e: any) => e.pointer), ['/lines/0/amount', '/lines/1/description', '/lines/1/quantity',
    '/lines/1/unit_price', '/lines/1/tax_rate', '/lines/2/quantity', '/lines/2/unit_price']);
  t.match(bad.json.errors[0].detail, /calculated by the service/);
  const jpy = await create({ currency: 'JPY', lines: [{ description: 'x', quantity: '1', unit_price: '1.5' }] });
  assertProblem(t, jpy, 422, 'INVALID_INVOICE_LINE');
  assertProblem(t, await create({ currency: 'XYZ' }), 422, 'VALIDATION_FAILED');
  assertProblem(t, await create({ lines: [{ description: 'credit', quantity: '1', unit_price: '-5.00' }] }), 422, 'INVALID_INVOICE_LINE');
  assertProblem(t, await create({ customer_id: 'cus_nope' }), 422, 'VALIDATION_FAILED');
});

t.test('editing: If-Match, drafts only, atomic line replacement', async (t) => {
  const { a, p, create, issue } = await world(t);
  const inv = (await create({ lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })).json;
  const url = `/v1/invoices/${inv.id}`;
  assertProblem(t, await a.request({ method: 'PATCH', url, token: p.token, payload: { memo: 'x' } }), 428, 'PRECONDITION_REQUIRED');
  assertProblem(t, await a.request({ method: 'PATCH', url, token: p.token, headers: { 'if-match': '"5"' }, payload: { memo: 'x' } }),
    412, 'STALE_RESOURCE');
  const up = await a.request({ method: 'PATCH', url, token: p.token, headers: { 'if-match': '"1"' },
    payload: { memo: 'Thanks', due_date: '2026-12-31' } });
  t.equal(up.statusCode, 200, up.body);
  t.match(up.json, { memo: 'Thanks', due_date: '2026-12-31', version: 2, total: '10.00' });
  const badLines = await a.request({ method: 'PUT', url: `${url}/lines`, token: p.token, headers: { 'if-match': '"2"' },
    payload: { lines: [{ description: 'b', quantity: '2', unit_price: '5.00' }, { description: 'c', quantity: '-1', unit_price: '1.00' }] } });
  assertProblem(t, badLines, 422, 'INVALID_INVOICE_LINE');
  const unchanged = await a.request({ url, token: p.token });
  t.match(unchanged.json, { version: 2, total: '10.00' }, 'nothing changed');
  t.equal(unchanged.json.lines.length, 1);
  const replaced = await a.request({ method: 'PUT', url: `${url}/lines`, token: p.token, headers: { 'if-match': '"2"' },
    payload: { lines: [{ description: 'b', quantity: '2', unit_price: '5.00' }, { description: 'c', quantity: '1', unit_price: '1.00' }] } });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.match(replaced.json, { version: 3, subtotal: '11.00', total: '11.00' });
  t.equal(replaced.headers.etag, '"3"');

  await issue(inv.id);
  assertProblem(t, await a.request({ method: 'PATCH', url, token: p.token, headers: { 'if-match': '"4"' }, payload: { memo: 'x' } }),
    409, 'INVOICE_NOT_EDITABLE');
  assertProblem(t, await a.request({ method: 'PUT', url: `${url}/lines`, token: p.token, headers: { 'if-match': '"4"' },
    payload: { lines: [] } }), 409, 'INVOICE_NOT_EDITABLE');
  assertProblem(t, await a.request({ url: '/v1/invoices/inv_nope', token: p.token }), 404, 'INVOICE_NOT_FOUND');
});

t.test('payments: issued invoices only, same currency, never above the amount due, even concurrently', async (t) => {
  const { a, p, create, issue } = await world(t);
  const inv = (await create({ lines: [{ description: 'a', quantity: '1', unit_price: '100.00' }] })).json;
  assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount: '10.00' }), 409, 'INVOICE_NOT_EDITABLE');
  await issue(inv.id);
  assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount: '10.00', currency: 'USD' }), 422, 'CURRENCY_MISMATCH');
  assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount: '100.01' }), 422, 'PAYMENT_EXCEEDS_AMOUNT_DUE');
  assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount: '1.001' }), 422, 'VALIDATION_FAILED');
  for (const amount of ['0', '0.00', '-1.00', '1e3', ''])
    assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount }), 422, 'VALIDATION_FAILED');
  assertProblem(t, await pay(a, p.token, { invoice_id: 'inv_nope', amount: '1.00' }), 404, 'INVOICE_NOT_FOUND');
  const part = await pay(a, p.token, { invoice_id: inv.id, amount: '30.00', external_reference: 'bank-1' });
  t.equal(part.statusCode, 201, part.body);
  t.match(part.json, { object: 'payment', id: /^pay_/, amount: '30.00', invoice: { status: 'sent', amount_due: '70.00', amount_paid: '30.00' } });

  // Ten concurrent payments of 10.00 against 70.00 due: exactly seven succeed.
  const results = await Promise.all(Array.from({ length: 10 }, () => pay(a, p.token, { invoice_id: inv.id, amount: '10.00' })));
  t.equal(results.filter((r) => r.statusCode === 201).length, 7, 'seven accepted');
  t.ok(results.filter((r) => r.statusCode !== 201).every((r) => r.json.code === 'PAYMENT_EXCEEDS_AMOUNT_DUE'), 'the rest refused');
  const after = await a.request({ url: `/v1/invoices/${inv.id}`, token: p.token });
  t.match(after.json, { status: 'paid', amount_due: '0.00', amount_paid: '100.00' });
  assertProblem(t, await pay(a, p.token, { invoice_id: inv.id, amount: '0.01' }), 422, 'PAYMENT_EXCEEDS_AMOUNT_DUE');
});

t.test('events: invoice.* and payment.*, one per command, visible to the Roles that read invoices', async (t) => {
  const { a, p, create, issue } = await world(t);
  const inv = (await create({ lines: [{ description: 'a', quantity: '1', unit_price: '50.00' }] })).json;
  const patched = await a.request({ method: 'PATCH', url: `/v1/invoices/${inv.id}`, token: p.token, headers: { 'if-match': '"1"' }, payload: { memo: 'm' } });
  t.equal(patched.json.version, 2);
  await issue(inv.id);
  const first = await pay(a, p.token, { invoice_id: inv.id, amount: '20.00' });
  const second = await pay(a, p.token, { invoice_id: inv.id, amount: '30.00' });
  // One group per transaction (same created_at); within a transaction the order is not defined.
  const rows = await a.admin`select string_agg(type || '@' || resource_version, ' ' order by type) as events from app.events
    where resource_id in (${inv.id}, ${first.json.id}, ${second.json.id}) group by created_at order by created_at`;
  t.same(rows.map((r) => r.events), ['invoice.created@1', 'invoice.updated@2', 'invoice.sent@3',
    'invoice.updated@4 payment.created@1', 'invoice.paid@5 payment.created@1']);
  const member = await a.createClient(p.orgId, { roles: 'member,hr' });
  const finance = await a.createClient(p.orgId, { roles: 'finance' });
  const mayRead = async (client: string, type: string, rt: string, id: string) =>
    (await a.admin`select app_private.client_may_read(${p.orgId}, ${client}, ${type}, ${rt}, ${id}) as ok`)[0]!.ok;
  t.equal(await mayRead(finance.id, 'invoice.sent', 'invoice', inv.id), true, 'finance receives invoice events');
  t.equal(await mayRead(finance.id, 'payment.created', 'payment', first.json.id), true, 'and payment events');
  t.equal(await mayRead(member.id, 'invoice.sent', 'invoice', inv.id), false, 'member/hr receive no invoice events');
  t.equal(await mayRead(member.id, 'payment.created', 'payment', first.json.id), false, 'nor payment events');
});

t.test('Roles: manager or finance; member and hr get nothing', async (t) => {
  const { a, p, create } = await world(t);
  const inv = (await create({ lines: [] })).json;
  const finance = await a.principal('finance', { org: p.orgId });
  t.equal((await a.request({ url: `/v1/invoices/${inv.id}`, token: finance.token })).statusCode, 200, 'finance reads');
  for (const roles of ['member', 'hr', 'member,hr']) {
    const c = await a.principal(roles, { org: p.orgId });
    assertProblem(t, await a.request({ url: '/v1/invoices', token: c.token }), 403, 'ROLE_REQUIRED');
    assertProblem(t, await a.request({ url: `/v1/invoices/${inv.id}`, token: c.token }), 403, 'ROLE_REQUIRED');
    assertProblem(t, await create({ lines: [] }, c.token), 403, 'ROLE_REQUIRED');
    assertProblem(t, await pay(a, c.token, { invoice_id: inv.id, amount: '1.00' }), 403, 'ROLE_REQUIRED');
  }
  const other = await a.principal('manager,finance');
  assertProblem(t, await a.request({ url: `/v1/invoices/${inv.id}`, token: other.token }), 404, 'INVOICE_NOT_FOUND');
});

t.test('void: issued invoices without payments; never deleted; drafts and paid ones are blocked', async (t) => {
  const { a, p, create, issue } = await world(t);
  const voidIt = (id: string, token = p.token) =>
    a.request({ method: 'POST', url: `/v1/invoices/${id}/void`, token, headers: idem() });
  const draft = (await create({ lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })).json;
  assertProblem(t, await voidIt(draft.id), 409, 'WORKFLOW_BLOCKED');
  await issue(draft.id);
  const v = await voidIt(draft.id);
  t.equal(v.statusCode, 200, v.body);
  t.match(v.json, { status: 'void', amount_due: '0.00', total: '10.00', version: 3 });
  t.equal(v.headers.etag, '"3"');
  const again = await voidIt(draft.id);
  t.match(again.json, { status: 'void', version: 3 }, 'voiding again changes nothing');
  assertProblem(t, await pay(a, p.token, { invoice_id: draft.id, amount: '1.00' }), 409, 'INVOICE_NOT_EDITABLE');
  const [row] = await a.admin`select count(*)::int as n from app.invoices where id = ${draft.id}`;
  t.equal(row!.n, 1, 'still there');

  const paid = (await create({ lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })).json;
  await issue(paid.id);
  t.equal((await pay(a, p.token, { invoice_id: paid.id, amount: '4.00' })).statusCode, 201);
  assertProblem(t, await voidIt(paid.id), 409, 'WORKFLOW_BLOCKED');
  assertProblem(t, await voidIt('inv_nope'), 404, 'INVOICE_NOT_FOUND');
  const member = await a.principal('member,hr', { org: p.orgId });
  assertProblem(t, await voidIt(paid.id, member.token), 403, 'ROLE_REQUIRED');
});
