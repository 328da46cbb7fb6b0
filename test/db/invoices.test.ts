// Invoice money inside the database: totals against an independent computation (BigInt, no
// floats) over thousands of random invoices in several currencies; the runtime role's limits.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { failure, oneConnection, beginRequest, inRequest, visibleRows } from '../helpers/sql.ts';
import { startApp, oneServer, CITUS_WORKERS } from '../helpers/app.ts';

const opts = oneConnection;

/** A deterministic generator, so a failure can be replayed. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

const pow10 = (n: number) => 10n ** BigInt(n);
/** PostgreSQL's round(numeric): half away from zero. */
function roundDiv(num: bigint, den: bigint): bigint {
  const neg = num < 0n;
  const a = neg ? -num : num;
  const q = (a * 2n + den) / (2n * den);
  return neg ? -q : q;
}
/** Rows of a relation in a request; a table's read names the request's organization (on a cluster, one shard's rows). */
const countIn = async (tx: postgres.TransactionSql, rel: string, org: string): Promise<number> => {
  const text = (...s: string[]) => Object.assign(s, { raw: s }) as unknown as TemplateStringsArray;
  const rows = rel.startsWith('app.') ? await tx(text(`select count(*)::int as n from ${rel} where organization_id = `, ''), org)
    : await tx(text(`select count(*)::int as n from ${rel}`));
  return rows[0]!.n;
};

const toText = (v: bigint, scale: number) => {
  const neg = v < 0n;
  const s = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const out = scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
  return neg ? `-${out}` : out;
};

// On a cluster the same triggers run on the shards; 500 invoices there keep make test-citus within
// CI's time (3,000 took 90 s of its files' time).
const RANDOM_INVOICES = CITUS_WORKERS.length > 0 ? 500 : 3000;

t.test(`totals equal an independent computation over ${RANDOM_INVOICES} random invoices in five currencies`, async (t) => {
  const a = await startApp(t);
  const org = await a.createOrg();
  const c = await a.createClient(org, { roles: 'finance' });
  const currencies: [string, number][] = [['EUR', 2], ['JPY', 0], ['KWD', 3], ['USD', 2], ['CLP', 0]];
  const customers: Record<string, string> = {};
  for (const [cur] of currencies) {
    customers[cur] = (await a.cli('customer', 'create', '--org', org, '--kind', 'billing', '--name', cur, '--currency', cur)).customer_id;
  }
  const random = rng(20261123);
  const invoices: { id: string; currency: string; scale: number; lines: { q: string; p: string; r: string }[] }[] = [];
  for (let i = 0; i < RANDOM_INVOICES; i++) {
    const [currency, scale] = currencies[i % currencies.length]!;
    // The first line is at least 100 units; later lines may credit up to 10 units each, so the
    // total stays positive (a negative total is refused: credit notes are not invoices).
    const lines = Array.from({ length: 1 + Math.floor(random() * 8) }, (_, n) => {
      const credit = n > 0 && random() < 0.15;
      const qi = credit ? BigInt(1 + Math.floor(random() * 10_000)) : BigInt(10_000 + Math.floor(random() * 5_000_000));
      const pi = credit ? -BigInt(1 + Math.floor(random() * 10 ** (1 + scale)))
        : BigInt(10 ** (2 + scale) + Math.floor(random() * 2 * 10 ** (6 + scale)));
      const ri = BigInt([0, 50_000, 70_000, 190_000, 200_000, 55_555, Math.floor(random() * 1_000_000)][Math.floor(random() * 7)]!);
      return { q: toText(qi, 4), p: toText(pi, scale), r: toText(ri, 4) };
    });
    invoices.push({ id: `inv_t${String(i).padStart(6, '0')}`, currency, scale, lines });
  }
  // As the owner, in bulk: the same triggers compute every line and total.
  await a.admin`insert into app.invoices (organization_id, id, customer_id, currency, created_by_client_id)
    select ${org}, x.id, x.customer, x.currency, ${c.id} from jsonb_to_recordset(${a.admin.json(
      invoices.map((v) => ({ id: v.id, customer: customers[v.currency], currency: v.currency })))}) as x(id text, customer text, currency text)`;
  await a.admin`insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, tax_rate)
    select ${org}, x.id, x.pos, 'line', x.q::numeric, x.p::numeric, x.r::numeric
      from jsonb_to_recordset(${a.admin.json(invoices.flatMap((v) => v.lines.map((l, pos) => ({ id: v.id, pos, ...l }))))})
        as x(id text, pos integer, q text, p text, r text)`;
  // Read as the finance client would (the api views apply its context and Role projection).
  const rows = await a.admin.begin(async (tx) => {
    await beginRequest(tx, c);
    const q = await inRequest(t, a.runtimeUrl, tx as never, org);
    return q`select id, doc from api.invoices`;
  }) as { id: string; doc: any }[];
  const byId = new Map(rows.map((r) => [r.id, r.doc]));
  let mismatches = 0;
  let lineCount = 0;
  for (const v of invoices) {
    let subtotal = 0n;
    let tax = 0n;
    const doc = byId.get(v.id);
    v.lines.forEach((l, i) => {
      const qi = BigInt(l.q.replace('.', ''));
      const pi = BigInt(l.p.replace('.', ''));
      const ri = BigInt(l.r.replace('.', ''));
      const amount = roundDiv(qi * pi, pow10(4)); // (4 + scale) decimals → scale
      const lineTax = roundDiv(amount * ri, 100n * pow10(4));
      subtotal += amount;
      tax += lineTax;
      lineCount++;
      if (doc.lines[i].amount !== toText(amount, v.scale) || doc.lines[i].tax_amount !== toText(lineTax, v.scale)) mismatches++;
    });
    const expected = { subtotal: toText(subtotal, v.scale), tax_total: toText(tax, v.scale), total: toText(subtotal + tax, v.scale) };
    if (doc.subtotal !== expected.subtotal || doc.tax_total !== expected.tax_total || doc.total !== expected.total) {
      if (mismatches++ < 3) t.same({ subtotal: doc.subtotal, tax_total: doc.tax_total, total: doc.total }, expected, `${v.id} ${v.currency}`);
    }
  }
  t.equal(mismatches, 0, `no drift over ${invoices.length} invoices and ${lineCount} lines`);
});

/** An organization with a finance client and a member/hr client, a billing customer, and the
 * runtime role's connection: `as(client, fn)` runs fn in a transaction with that client's context. */
async function runtimeWorld(t: Test) {
  const a = await startApp(t);
  const org = await a.createOrg();
  const fin = await a.createClient(org, { roles: 'finance' });
  const mem = await a.createClient(org, { roles: 'member,hr' });
  const cus = (await a.cli('customer', 'create', '--org', org, '--kind', 'billing', '--name', 'C', '--currency', 'EUR')).customer_id as string;
  const rt = postgres(a.runtimeUrl, opts);
  t.teardown(() => rt.end());
  const as = <T>(c: typeof fin, fn: (tx: postgres.TransactionSql) => Promise<T>) => a.admin.begin(async (tx) => {
    await beginRequest(tx, c);
    // As the surface's owner role: the runtime role itself reaches no table (tenancy.test.ts); on a
    // cluster in the organization's worker, where begin_request signed the context.
    return fn(await inRequest(t, a.runtimeUrl, tx as never, c.orgId, { role: 'svc_api' }) as never);
  }) as Promise<T>;
  /** As the owner (a DBA): issuing takes a PDF in the same transaction (checked at commit). */
  const ownerIssue = (id: string, set: (tx: postgres.TransactionSql) => Promise<unknown> = (tx) => tx`update app.invoices set status = 'sent' where id = ${id}`) =>
    a.admin.begin(async (tx) => {
      await set(tx);
      const pdf = Buffer.from(`%PDF-1.3 ${id}`);
      const [f] = await tx`insert into app.files (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id, retention)
        select organization_id, 'stand-in.pdf', 'application/pdf', ${pdf.length}, encode(sha256(${pdf}::bytea), 'hex'), 'invoice', id, 'financial_record'
          from app.invoices where id = ${id} returning id`;
      await tx`insert into app.file_contents (organization_id, file_id, content) values (${org}, ${f!.id}, ${pdf})`;
      await tx`update app.invoices set pdf_file_id = ${f!.id} where id = ${id}`;
    });
  return { a, org, fin, mem, cus, rt, as, ownerIssue };
}

t.test('runtime role: no context sees nothing; totals are not writable; issued invoices are never deleted', async (t) => {
  const { a, org, fin, mem, cus, rt, as, ownerIssue } = await runtimeWorld(t);
  const [inv] = await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus,
    lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })})`);
  for (const table of ['app.invoices', 'app.invoice_lines', 'app.payments', 'api.invoices']) {
    t.equal(await visibleRows(rt, table), 0, `${table}: nothing without context`);
    t.equal(await as(mem, (tx) => countIn(tx, table, org)), 0, `${table}: nothing for member/hr`);
  }
  t.match(await failure(as(fin, (tx) => tx`update app.invoices set total = 0 where id = ${inv!.id} and organization_id = ${org}`)), /^42501/, 'totals not writable');
  t.match(await failure(as(fin, (tx) => tx`update app.invoices set status = 'paid' where id = ${inv!.id} and organization_id = ${org}`)), /^42501/, 'status not writable');
  t.match(await failure(as(fin, (tx) => tx`update app.invoice_lines set amount = 1 where organization_id = ${org}`)), /^42501/, 'line amounts not writable');
  t.match(await failure(as(fin, (tx) => tx`insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price, amount, tax_amount)
    values (${org}, ${inv!.id}, 5, 'x', 1, 1, 999, 0)`)), /^42501/, 'amounts cannot be supplied');
  t.match(await failure(as(fin, (tx) => tx`delete from app.invoices where id = ${inv!.id} and organization_id = ${org}`)), /^42501/, 'no delete grant');
  t.match(await failure(as(fin, (tx) => tx`insert into app.invoices (organization_id, customer_id, currency, created_by_client_id, status, number, total)
    values (${org}, ${cus}, 'EUR', ${fin.id}, 'paid', 'INV-X', 100)`)), /^42501/, 'status, number and totals are not insertable');
  const company = (await a.cli('customer', 'create', '--org', org, '--kind', 'company', '--name', 'Co')).customer_id;
  t.equal(await failure(as(fin, (tx) => tx`insert into app.invoices (organization_id, customer_id, currency, created_by_client_id)
    values (${org}, ${company}, 'EUR', 'apic_someone_else')`)), 'SVV22 VALIDATION_FAILED', 'only billing customers');
  const [own] = await as(fin, (tx) => tx`insert into app.invoices (organization_id, customer_id, currency, created_by_client_id)
    values (${org}, ${cus}, 'EUR', 'apic_someone_else') returning created_by_client_id, status, total`);
  t.same({ ...own }, { created_by_client_id: fin.id, status: 'draft', total: '0' }, 'the creator is the caller; a draft with nothing on it');
  t.equal(await failure(a.admin`insert into app.invoices (organization_id, customer_id, currency, created_by_client_id, status, number)
    values (${org}, ${cus}, 'EUR', ${fin.id}, 'sent', 'INV-Y')`), 'SVV22 VALIDATION_FAILED', 'not even the owner inserts an issued invoice');

  await ownerIssue(inv!.id);
  t.equal(await failure(a.admin`delete from app.invoices where id = ${inv!.id}`), 'SVC09 INVOICE_NOT_EDITABLE', 'not even the owner deletes it');
  t.equal(await failure(a.admin`update app.invoices set total = 1 where id = ${inv!.id}`), 'SVC09 INVOICE_NOT_EDITABLE');
  t.equal(await failure(a.admin`delete from app.invoice_lines where invoice_id = ${inv!.id}`), 'SVC09 INVOICE_NOT_EDITABLE');
  await as(fin, (tx) => tx`select * from api.payment_create(${tx.json({ invoice_id: inv!.id, amount: '4.00', currency: 'EUR',
    received_date: '2026-11-01', method: 'cash' })})`);
  t.match(await failure(a.admin`update app.payments set amount = 1`), /^SVC09/, 'payments are immutable');
  t.match(await failure(a.admin`update app.invoices set amount_paid = 11 where id = ${inv!.id}`), /invoices_paid_within_total/);
});

t.test('issuing in SQL: every writer gets the next gapless number; no way back, no renumbering; PDFs are kept', async (t) => {
  const { a, org, fin, mem, cus, rt, as, ownerIssue } = await runtimeWorld(t);
  const draft = async () => (await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus,
    lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })})`))[0]!.id as string;
  const [i1, i2, i3] = [await draft(), await draft(), await draft()];

  // A DBA issuing by hand: the supplied number is ignored, the next one is taken.
  await ownerIssue(i1, (tx) => tx`update app.invoices set status = 'sent', number = 'INV-999999' where id = ${i1}`);
  // A rolled-back issue returns its number; so does one without its PDF (refused at commit).
  await a.admin.begin(async (tx) => {
    await tx`update app.invoices set status = 'sent' where id = ${i2}`;
    throw new Error('rolled back');
  }).catch(() => undefined);
  t.equal(await failure(a.admin`update app.invoices set status = 'sent' where id = ${i2}`), 'SVC09 WORKFLOW_BLOCKED', 'no PDF, no issuing (at commit)');
  t.same(await a.admin`select status, number from app.invoices where id = ${i2}`, [{ status: 'draft', number: null }]);
  await ownerIssue(i3);
  const rows = await a.admin`select id, number, status from app.invoices where number is not null order by number`;
  t.same(rows.map((r) => r.number), ['INV-000001', 'INV-000002'], 'gapless, whoever issues');
  t.equal(rows[1]!.id, i3);

  t.equal(await failure(a.admin`update app.invoices set number = 'INV-000007' where id = ${i1}`), 'SVC09 INVOICE_NOT_EDITABLE', 'no renumbering');
  t.equal(await failure(a.admin`update app.invoices set status = 'draft' where id = ${i1}`), 'SVC09 WORKFLOW_BLOCKED', 'no way back to draft');
  t.equal(await failure(a.admin`update app.invoices set status = 'void', number = 'INV-000777' where id = ${i1}`), 'SVC09 INVOICE_NOT_EDITABLE', 'no renumbering on the way to void');
  t.equal(await failure(a.admin`update app.invoices set status = 'void', pdf_file_id = null, sent_at = null where id = ${i1}`), 'SVC09 INVOICE_NOT_EDITABLE', 'nor losing the PDF or the date');
  t.match(await failure(a.admin`update app.invoices set status = 'paid' where id = ${i1}`), /invoices_paid_means_settled/, 'not paid without payments');
  t.equal(await failure(a.admin`update app.invoices set number = 'X' where id = ${i2}`), 'SVC09 INVOICE_NOT_EDITABLE', 'a draft has no number');
  t.equal(await failure(a.admin`update app.invoices set sync_status = 'synced', sync_connection_id = null where id = ${i2}`), 'SVC09 INVOICE_NOT_EDITABLE', 'nor a sync');
  const [empty] = await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus })})`);
  t.equal(await failure(a.admin`update app.invoices set status = 'sent' where id = ${empty!.id}`), 'SVC09 WORKFLOW_BLOCKED', 'nothing to bill');

  // The runtime role cannot issue by writing the status, nor store files itself.
  t.match(await failure(as(fin, (tx) => tx`update app.invoices set status = 'sent' where id = ${i2} and organization_id = ${org}`)), /^42501/, 'status not writable');
  t.match(await failure(as(fin, (tx) => tx`insert into app.files (organization_id, name, content_type, size_bytes, sha256, linked_resource_type, linked_resource_id)
    values (${org}, 'x.pdf', 'application/pdf', 1, ${'0'.repeat(64)}, 'invoice', ${i1})`)), /^42501/, 'no file insert outside an upload (a policy)');
  t.match(await failure(as(mem, (tx) => tx`select api.invoice_send(${i2}, false)`)), /^SVN04 INVOICE_NOT_FOUND/, 'member/hr cannot send');

  // Through the API's functions (without the PDF: the next test): the PDF must look like one; a
  // draft edit and the send in one transaction are one version, two events' worth.
  t.equal(await failure(as(fin, async (tx) => {
    await tx`select api.invoice_send(${i2}, false)`;
    await tx`select api.invoice_attach_pdf(${i2}, 'INV-000003.pdf', ${Buffer.from('<html>not a pdf')})`;
  })), 'SVV22 VALIDATION_FAILED', 'not a PDF');
  t.equal(await failure(as(fin, async (tx) => {
    await tx`select api.invoice_send(${i2}, false)`;
    await tx`select api.invoice_attach_pdf(${i2}, 'INV-000003.pdf', ${Buffer.from('%PDF-1.3 pay to IBAN X')})`;
  })), 'SVV22 VALIDATION_FAILED', 'not a whole PDF (no %%EOF)');
  t.equal(await failure(as(fin, async (tx) => {
    await tx`select api.invoice_send(${i2}, false)`;
    await tx`select api.invoice_attach_pdf(${i2}, '../../etc/passwd', ${Buffer.from('%PDF-1.3\n%%EOF')})`;
  })), 'SVV22 VALIDATION_FAILED', 'a plain .pdf name');
  const file = await as(fin, async (tx) => {
    await tx`select * from api.invoice_update(${i2}, '{1}', ${tx.json({ memo: 'edited in the same transaction' })})`;
    await tx`select api.invoice_send(${i2}, false)`;
    const [f] = await tx`select api.invoice_attach_pdf(${i2}, 'INV-000003.pdf', ${Buffer.from('%PDF-1.3 test\n%%EOF\n')}) as id`;
    return f!.id as string;
  });
  const [issued] = await a.admin`select number, version, pdf_file_id from app.invoices where id = ${i2}`;
  t.same({ ...issued }, { number: 'INV-000003', version: 2, pdf_file_id: file }, 'one version for the whole send');
  t.same((await a.admin`select type from app.events where resource_id = ${i2} order by type`).map((r) => r.type),
    ['invoice.created', 'invoice.sent', 'invoice.updated'], 'the status change is announced even within one version');
  t.equal(await failure(as(fin, (tx) => tx`select api.invoice_attach_pdf(${i2}, 'again.pdf', ${Buffer.from('%PDF-2')})`)),
    'SVC09 INVOICE_NOT_EDITABLE', 'the PDF is made once');
  t.equal(await failure(a.admin`update app.files set name = 'other.pdf' where id = ${file}`), 'SVC09 CONFLICT', 'retained: no change');
  t.equal(await failure(a.admin`delete from app.files where id = ${file}`), 'SVC09 CONFLICT', 'retained: no delete');
  t.equal(await failure(a.admin`update app.file_contents set content = 'x' where file_id = ${file}`), 'SVC09 CONFLICT', 'content never changes');
  t.equal(await failure(a.admin`update app.invoices set pdf_file_id = null where id = ${i2}`), 'SVC09 INVOICE_NOT_EDITABLE', 'the invoice keeps its PDF');
  t.equal((await as(fin, (tx) => tx`select count(*)::int as n from app.file_contents where organization_id = ${org}`))[0]!.n, 3, 'finance reads the PDFs');
  for (const table of ['app.files', 'app.file_contents']) {
    t.equal(await visibleRows(rt, table), 0, `${table}: nothing without context`);
    t.equal(await as(mem, (tx) => countIn(tx, table, org)), 0, `${table}: nothing for member/hr`);
  }
});

t.test('issuing through the API\'s functions without attaching the PDF is refused at commit',
  oneServer('the check is deferred to commit, which on Citus runs in the worker, and Citus reports only "could not commit transaction" (docs/scaling.md)'),
  async (t) => {
    const { fin, cus, as } = await runtimeWorld(t);
    const [inv] = await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus,
      lines: [{ description: 'a', quantity: '1', unit_price: '10.00' }] })})`);
    t.equal(await failure(as(fin, (tx) => tx`select api.invoice_send(${inv!.id}, false)`)), 'SVC09 WORKFLOW_BLOCKED', 'no PDF, no issuing');
  });

t.test('SQL: no leaks across organizations through the triggers; lines stay put; numbers past 999999', async (t) => {
  const { a, org, fin, cus, as, ownerIssue } = await runtimeWorld(t);
  const other = await a.createOrg();
  const finB = await a.createClient(other, { roles: 'finance' });
  const [inv] = await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus,
    lines: [{ description: 'a', quantity: '1', unit_price: '100.00' }] })})`);
  const [inv2] = await as(fin, (tx) => tx`select doc ->> 'id' as id from api.invoice_create(${tx.json({ customer_id: cus,
    lines: [{ description: 'b', quantity: '1', unit_price: '5.00' }] })})`);
  await ownerIssue(inv!.id);
  // Client B names A's invoice in its own rows: not found, and nothing about it in the error.
  const pay = await failure(as(finB, (tx) => tx`insert into app.payments (organization_id, invoice_id, amount, currency, received_date, method, created_by_client_id)
    values (${other}, ${inv!.id}, 1000, 'USD', '2026-11-01', 'cash', ${finB.id})`));
  t.equal(pay, 'SVN04 INVOICE_NOT_FOUND', 'a payment against another organization\'s invoice');
  const line = await failure(as(finB, (tx) => tx`insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price)
    values (${other}, ${inv2!.id}, 9, 'x', 1, 1.001)`));
  t.equal(line, 'SVN04 INVOICE_NOT_FOUND', 'a line on another organization\'s invoice');
  // As the owner: a line never moves (it would leave an issued invoice short).
  t.equal(await failure(a.admin`update app.invoice_lines set invoice_id = ${inv2!.id} where invoice_id = ${inv!.id}`),
    'SVC09 INVOICE_NOT_EDITABLE', 'lines stay on their invoice');
  // Past six digits the number just grows.
  await a.admin`update app_private.invoice_number_counters set last_number = 999999 where organization_id = ${org}`;
  await ownerIssue(inv2!.id);
  t.same((await a.admin`select number from app.invoices where id = ${inv2!.id}`)[0], { number: 'INV-1000000' });
});
