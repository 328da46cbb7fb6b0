// The invoices and payments benchmarks, run by bench/run.ts after bench/time.ts and before
// bench/webhooks.ts, on the same server and database:
//  - seed: one billing customer (EUR) in the benchmarked client's organization (svc-admin);
//  - POST /v1/invoices with 50 lines, a fresh Idempotency-Key per request: under autocannon
//    (warm-up, then the standard duration and connections) and one at a time (a fixed number);
//    the first response's totals are checked against the same per-line half-up rounding done here;
//    after the concurrent warm-up, ANALYZE app.invoices and app.invoice_lines, as autovacuum would on a
//    server that runs it (see below; BENCH_INVOICES_ANALYZE=0 skips it). Sequential scans of the two
//    tables during the createInvoice runs are read from pg_stat_user_tables and reported;
//  - POST /v1/payments of 1.00 EUR: PAYMENT_INVOICES invoices of 1,000,000.00 EUR (one line) plus
//    one more, inserted as drafts by the owner in SQL and issued through POST /v1/invoices/{id}/send
//    (email false; issuing needs the PDF in the same transaction, so SQL alone cannot issue), then
//    ANALYZE; payments spread round-robin over the PAYMENT_INVOICES invoices, then every connection
//    paying the one invoice (the row lock serializes them); afterwards, in SQL, every invoice's
//    amount_paid must equal the sum of its payments, and the payments recorded the 2xx responses
//    plus at most the requests in flight when each duration run stopped;
//  - POST /v1/invoices/{id}/send with delivery.email false (numbers the draft, renders the PDF in
//    the request, stores it): the 50-line drafts of the first step, a fixed number concurrently and
//    one at a time, with the server's default SVC_INVOICE_SEND_CONCURRENCY unless set.
// Returns a markdown section that run.ts appends to its output and to bench/results/latest.md.
import autocannon, { type Result } from 'autocannon';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { cli, logger, ms, type BenchOptions, type BenchResult, type LoadOptions, type RequestSpec } from './common.ts';

const LINES = 50;
const SEQUENTIAL_CREATES = 200;
const SEQUENTIAL_WARMUP = 20;
const PAYMENT_INVOICES = 1000;
const PAYMENT_INVOICE_TOTAL = '1000000.00';
const PAYMENT_AMOUNT = '1.00';
const SENDS_CONCURRENT = 200;
const SENDS_SEQUENTIAL = 50;
const SENDS_WARMUP = 20;
const SEED_SEND_WORKERS = 8;
// This machine's PostgreSQL runs with autovacuum off: without an ANALYZE, the pooled sessions keep the
// plans they made while the invoice tables were empty (sequential scans, see docs/benchmarks.md).
const ANALYZE_AFTER_WARMUP = process.env.BENCH_INVOICES_ANALYZE !== '0';
const CURRENCY = 'EUR';

export type InvoiceBenchOptions = BenchOptions;

export type InvoiceBenchResult = BenchResult;

const log = logger('invoices');



const ok2xx = (r: Result) => Object.entries(r.statusCodeStats ?? {})
  .filter(([code]) => code.startsWith('2')).reduce((n, [, s]) => n + s.count, 0);
const bad = (r: Result) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0;

// ---------------------------------------------------------------------------------------------
// The 50-line body and its expected totals (per line: amount = round(quantity x unit_price, 2),
// tax = round(amount x tax_rate / 100, 2), half-up, then summed), in integers.

interface Line { description: string; quantity: string; unit_price: string; tax_rate?: string }

function invoiceLines(): Line[] {
  const rates = ['19', '7', '0', '19.5', undefined];
  const lines: Line[] = [];
  for (let i = 0; i < LINES; i++) {
    const rate = rates[i % rates.length];
    lines.push({
      description: `Line ${i + 1}: consulting, ${['design', 'engineering', 'review', 'travel', 'licences'][i % 5]}`,
      quantity: `${1 + (i % 5)}.${String((i * 1237) % 10000).padStart(4, '0')}`,
      unit_price: `${10 + ((i * 13) % 500)}.${String((i * 7) % 100).padStart(2, '0')}`,
      ...(rate === undefined ? {} : { tax_rate: rate }),
    });
  }
  return lines;
}

/** A non-negative decimal string as an integer of the given scale (no rounding: the scale is enough). */
function scaled(s: string, scale: number): bigint {
  const [int, frac = ''] = s.split('.');
  return BigInt(int! + frac.padEnd(scale, '0'));
}
const roundDiv = (x: bigint, d: bigint) => (x + d / 2n) / d; // half-up, x >= 0
const cents = (c: bigint) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`;

function expectedTotals(lines: Line[]): { subtotal: string; tax_total: string; total: string } {
  let subtotal = 0n;
  let tax = 0n;
  for (const l of lines) {
    const amount = roundDiv(scaled(l.quantity, 4) * scaled(l.unit_price, 2), 10_000n); // 1e-6 -> cents
    subtotal += amount;
    tax += roundDiv(amount * scaled(l.tax_rate ?? '0', 4), 1_000_000n); // cents x rate(1e-4) / 100 -> cents
  }
  return { subtotal: cents(subtotal), tax_total: cents(tax), total: cents(subtotal + tax) };
}

// ---------------------------------------------------------------------------------------------

export async function runInvoiceBench(o: InvoiceBenchOptions): Promise<InvoiceBenchResult> {
  const started = process.hrtime.bigint();
  const failed: string[] = [];
  const notes: string[] = [];
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  try {
    // --- Seed ---------------------------------------------------------------------------------
    const [client] = await sql<{ organization_id: string; svc_roles: string[] }[]>`
      select organization_id, svc_roles from app.api_clients where id = ${o.clientId}`;
    if (!client) throw new Error(`no API client ${o.clientId}`);
    // Every invoicing operation needs manager or finance.
    if (!client.svc_roles.some((r) => r === 'manager' || r === 'finance')) {
      await cli(o.url, 'client', 'set-roles', '--client', o.clientId, '--roles', [...client.svc_roles, 'finance'].join(','));
    }
    const org = client.organization_id;
    const { customer_id: customer } = await cli(o.url, 'customer', 'create', '--org', org, '--kind', 'billing',
      '--name', 'Bench Customer GmbH', '--email', 'billing@customer.bench.example', '--currency', CURRENCY) as { customer_id: string };
    log(`billing customer ${customer} in ${org}`);

    const bearer = { authorization: `Bearer ${o.token}` };
    const postHeaders = { ...bearer, 'content-type': 'application/json' };
    const keyPrefix = randomUUID();
    let key = 0;
    const freshKey = () => `${keyPrefix}-${++key}`;
    const load = (opts: Omit<LoadOptions, 'url'>) =>
      autocannon({ url: o.base, connections: o.connections, timeout: 60, ...opts } as LoadOptions);
    // A fixed number of requests, timed from the call to the last response: autocannon only notices
    // that the amount is reached on its next one-second tick, so its own end is up to 1 s late.
    const counted = async (opts: Omit<LoadOptions, 'url'>): Promise<{ r: Result; seconds: number }> => {
      const begun = process.hrtime.bigint();
      let last = begun;
      const instance = autocannon({ url: o.base, connections: o.connections, timeout: 60, ...opts } as LoadOptions) as unknown as
        Promise<Result> & { on(event: 'response', listener: () => void): void };
      instance.on('response', () => { last = process.hrtime.bigint(); });
      const r = await instance;
      return { r, seconds: Number(last - begun) / 1e9 };
    };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(o.base + path, { method: 'POST', headers: { ...postHeaders, 'idempotency-key': freshKey() },
        body: JSON.stringify(body) });
      return { status: res.status, body: await res.text() };
    };

    // --- createInvoice, 50 lines ----------------------------------------------------------------
    const lines = invoiceLines();
    const invoiceBody = JSON.stringify({ customer_id: customer, currency: CURRENCY, memo: 'Bench invoice', lines });
    const expected = expectedTotals(lines);
    const first = await post('/v1/invoices', JSON.parse(invoiceBody));
    if (first.status !== 201) throw new Error(`POST /v1/invoices: ${first.status} ${first.body.slice(0, 500)}`);
    const firstDoc = JSON.parse(first.body) as { lines: unknown[]; subtotal: string; tax_total: string; total: string; status: string };
    const got = { subtotal: firstDoc.subtotal, tax_total: firstDoc.tax_total, total: firstDoc.total };
    if (firstDoc.lines.length !== LINES || firstDoc.status !== 'draft' || JSON.stringify(got) !== JSON.stringify(expected)) {
      throw new Error(`POST /v1/invoices: expected a draft with ${LINES} lines and ${JSON.stringify(expected)}, got ` +
        `${firstDoc.status}, ${firstDoc.lines.length} lines, ${JSON.stringify(got)}`);
    }
    const responseBytes = Buffer.byteLength(first.body);
    const createRequests: RequestSpec[] = [{
      method: 'POST', path: '/v1/invoices', headers: postHeaders, body: invoiceBody,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': freshKey() } }),
    }];
    const countInvoices = async () => (await sql<{ n: number }[]>`
      select count(*)::int as n from app.invoices where organization_id = ${org} and customer_id = ${customer}`)[0]!.n;
    // Cumulative sequential scans (PostgreSQL flushes a busy backend's counters about once a second,
    // so a delta may miss the last second of a run: an order of magnitude, not an exact count).
    const scans = async () => {
      const rows = await sql<{ relname: string; seq_scan: string; seq_tup_read: string }[]>`
        select relname, seq_scan::text, seq_tup_read::text from pg_stat_user_tables
         where schemaname = 'app' and relname in ('invoices', 'invoice_lines')`;
      const get = (name: string, k: 'seq_scan' | 'seq_tup_read') => Number(rows.find((r) => r.relname === name)?.[k] ?? 0);
      return { invoices: get('invoices', 'seq_scan'), invoicesRows: get('invoices', 'seq_tup_read'),
        lines: get('invoice_lines', 'seq_scan'), linesRows: get('invoice_lines', 'seq_tup_read') };
    };

    log(`POST /v1/invoices (${LINES} lines): warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
    const createBefore = await countInvoices();
    const createWarm = await load({ requests: createRequests, duration: o.warmup });
    if (ANALYZE_AFTER_WARMUP) await sql`analyze app.invoices, app.invoice_lines`;
    const scans0 = await scans();
    const create = await load({ requests: createRequests, duration: o.duration });
    log(`POST /v1/invoices (${LINES} lines): ${SEQUENTIAL_WARMUP} warm-up, then ${SEQUENTIAL_CREATES} one at a time`);
    const createSeqWarm = await load({ requests: createRequests, connections: 1, amount: SEQUENTIAL_WARMUP });
    const { r: createSeq, seconds: createSeqSeconds } = await counted({ requests: createRequests, connections: 1, amount: SEQUENTIAL_CREATES });
    await new Promise((r) => setTimeout(r, 1500));
    const scans1 = await scans();
    const createdRows = (await countInvoices()) - createBefore;
    const created2xx = [createWarm, create, createSeqWarm, createSeq].reduce((n, r) => n + ok2xx(r), 0);
    const [lineCheck] = await sql<{ wrong: number; wrong_totals: number }[]>`
      select count(*) filter (where n <> ${LINES})::int as wrong,
             count(*) filter (where (i.subtotal, i.tax_total, i.total)
                                    is distinct from (${expected.subtotal}::numeric, ${expected.tax_total}::numeric, ${expected.total}::numeric))::int as wrong_totals
        from app.invoices i
        join lateral (select count(*)::int as n from app.invoice_lines l where l.invoice_id = i.id) l on true
       where i.organization_id = ${org} and i.customer_id = ${customer}`;
    // A duration run stops with up to `connections` requests in flight: autocannon closes their sockets
    // uncounted, and the server completes them. So rows = 2xx responses + at most that many per run.
    const createInFlight = createdRows - created2xx;
    const createOk = createInFlight >= 0 && createInFlight <= 2 * o.connections && lineCheck!.wrong === 0 && lineCheck!.wrong_totals === 0;
    if (!createOk) failed.push('createInvoice: database check');
    const createdMeasured = create.requests.total + createSeqWarm.requests.total + createSeq.requests.total;
    const per = (x: number) => (x / createdMeasured).toFixed(x / createdMeasured >= 10 ? 0 : 1);
    notes.push(`- ${ANALYZE_AFTER_WARMUP ? '`ANALYZE app.invoices, app.invoice_lines` after the 2 s warm-up' : 'No ANALYZE (BENCH_INVOICES_ANALYZE=0)'}. ` +
      `Sequential scans during the createInvoice runs after it (about ${createdMeasured.toLocaleString('en')} invoices): app.invoices ` +
      `${(scans1.invoices - scans0.invoices).toLocaleString('en')} (${per(scans1.invoices - scans0.invoices)} per invoice, ` +
      `${(scans1.invoicesRows - scans0.invoicesRows).toLocaleString('en')} rows read), app.invoice_lines ` +
      `${(scans1.lines - scans0.lines).toLocaleString('en')} (${(scans1.linesRows - scans0.linesRows).toLocaleString('en')} rows read).`);
    notes.push(`- createInvoice: ${createdRows.toLocaleString('en')} invoices created in the database for ${created2xx.toLocaleString('en')} 2xx responses ` +
      `(warm-ups included; the ${createInFlight} more were in flight when the two duration runs stopped, at most ${o.connections} each); ${lineCheck!.wrong} of them without exactly ${LINES} lines, ${lineCheck!.wrong_totals} with totals other than ` +
      `subtotal ${expected.subtotal}, tax ${expected.tax_total}, total ${expected.total} (computed here per line, half-up): ` +
      `**${createOk ? 'OK' : 'MISMATCH'}**. Response: ${responseBytes.toLocaleString('en')} bytes.`);

    // --- createPayment ----------------------------------------------------------------------------
    log(`seeding ${PAYMENT_INVOICES} + 1 draft invoices of ${PAYMENT_INVOICE_TOTAL} ${CURRENCY} (owner SQL, triggers on)`);
    let t = process.hrtime.bigint();
    const payIds = await sql.begin(async (tx) => {
      const ids = (await tx<{ id: string }[]>`
        insert into app.invoices (organization_id, customer_id, currency, memo, created_by_client_id)
        select ${org}, ${customer}, ${CURRENCY}, format('Payment bench invoice %s', g), ${o.clientId}
          from generate_series(0, ${PAYMENT_INVOICES}::int) g
        returning id`).map((r) => r.id);
      await tx`
        insert into app.invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price)
        select ${org}, id, 0, 'Annual contract', 1, ${PAYMENT_INVOICE_TOTAL}::numeric from unnest(${ids}::text[]) id`;
      return ids;
    });
    const draftSeconds = ms(t) / 1000;
    log(`issuing them: POST /v1/invoices/{id}/send (email false), ${SEED_SEND_WORKERS} requests at a time`);
    t = process.hrtime.bigint();
    let nextToIssue = 0;
    await Promise.all(Array.from({ length: SEED_SEND_WORKERS }, async () => {
      while (nextToIssue < payIds.length) {
        const id = payIds[nextToIssue++]!;
        const r = await post(`/v1/invoices/${id}/send`, { delivery: { email: false } });
        if (r.status !== 200) throw new Error(`POST /v1/invoices/${id}/send: ${r.status} ${r.body.slice(0, 500)}`);
      }
    }));
    const issueSeconds = ms(t) / 1000;
    await sql`analyze app.invoices, app.invoice_lines, app.payments`;
    const [issuedCheck] = await sql<{ n: number }[]>`
      select count(*)::int as n from app.invoices where id = any(${payIds}::text[]) and status = 'sent' and number is not null
         and total = ${PAYMENT_INVOICE_TOTAL}::numeric and amount_paid = 0`;
    if (issuedCheck!.n !== payIds.length) throw new Error(`seeded ${issuedCheck!.n} of ${payIds.length} issued invoices`);
    const hot = payIds[PAYMENT_INVOICES]!;
    const spreadIds = payIds.slice(0, PAYMENT_INVOICES);
    const today = new Date().toISOString().slice(0, 10);
    const paymentBody = (invoice: string) => JSON.stringify({ invoice_id: invoice, amount: PAYMENT_AMOUNT, currency: CURRENCY,
      received_date: today, method: 'bank_transfer' });
    const firstPay = await post('/v1/payments', JSON.parse(paymentBody(hot)));
    if (firstPay.status !== 201) throw new Error(`POST /v1/payments: ${firstPay.status} ${firstPay.body.slice(0, 500)}`);
    let next = 0;
    const spreadRequests: RequestSpec[] = [{
      method: 'POST', path: '/v1/payments', headers: postHeaders,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': freshKey() },
        body: paymentBody(spreadIds[next++ % spreadIds.length]!) }),
    }];
    const hotRequests: RequestSpec[] = [{
      method: 'POST', path: '/v1/payments', headers: postHeaders, body: paymentBody(hot),
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': freshKey() } }),
    }];
    log(`POST /v1/payments over ${PAYMENT_INVOICES} invoices: warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
    const spreadWarm = await load({ requests: spreadRequests, duration: o.warmup });
    const spread = await load({ requests: spreadRequests, duration: o.duration });
    log(`POST /v1/payments, all on one invoice: warm-up ${o.warmup} s, then ${o.duration} s with ${o.connections} connections`);
    const hotWarm = await load({ requests: hotRequests, duration: o.warmup });
    const hotRun = await load({ requests: hotRequests, duration: o.duration });
    const pay2xx = 1 + [spreadWarm, spread, hotWarm, hotRun].reduce((n, r) => n + ok2xx(r), 0);
    const hot2xx = 1 + ok2xx(hotWarm) + ok2xx(hotRun);

    // Every invoice of the organization: amount_paid = the sum of its payments; status as expected.
    const [payCheck] = await sql<{ invoices: number; mismatched: number; payments: number; paid_sum: string;
      hot_payments: number; hot_paid: string; not_sent: number }[]>`
      select count(*)::int as invoices,
             count(*) filter (where i.amount_paid <> coalesce(p.total, 0))::int as mismatched,
             coalesce(sum(p.n), 0)::int as payments,
             coalesce(sum(i.amount_paid), 0)::text as paid_sum,
             coalesce(max(p.n) filter (where i.id = ${hot}), 0)::int as hot_payments,
             max(i.amount_paid) filter (where i.id = ${hot})::text as hot_paid,
             count(*) filter (where i.id = any(${payIds}::text[]) and i.status <> 'sent')::int as not_sent
        from app.invoices i
        left join (select invoice_id, sum(amount) as total, count(*)::int as n from app.payments
                    where organization_id = ${org} group by invoice_id) p on p.invoice_id = i.id
       where i.organization_id = ${org}`;
    const pc = payCheck!;
    // As above: up to `connections` payments per duration run (four spread, two of them on one invoice) are
    // recorded without a counted response.
    const payInFlight = pc.payments - pay2xx;
    const hotInFlight = pc.hot_payments - hot2xx;
    const payOk = pc.mismatched === 0 && pc.not_sent === 0 && payInFlight >= 0 && payInFlight <= 4 * o.connections
      && hotInFlight >= 0 && hotInFlight <= 2 * o.connections
      && pc.hot_paid === (pc.hot_payments * Number(PAYMENT_AMOUNT)).toFixed(2);
    if (!payOk) failed.push('createPayment: database check');
    notes.push(`- Payment invoices: ${PAYMENT_INVOICES.toLocaleString('en')} + 1 invoices of ${PAYMENT_INVOICE_TOTAL} ${CURRENCY} (one line), inserted ` +
      `as drafts by the owner in ${draftSeconds.toFixed(1)} s, then issued through sendInvoice (email false, ${SEED_SEND_WORKERS} requests at a time, ` +
      `1-line PDFs) in ${issueSeconds.toFixed(1)} s: **${(payIds.length / issueSeconds).toFixed(1)} sends/s**; then ANALYZE. ` +
      `Each payment ${PAYMENT_AMOUNT} ${CURRENCY}, so none nears the amount due.`);
    notes.push(`- createPayment, checked in SQL after the runs: ${pc.invoices.toLocaleString('en')} invoices in the organization, ` +
      `${pc.mismatched} whose amount_paid differs from the sum of their payments; ${pc.payments.toLocaleString('en')} payments ` +
      `(${pay2xx.toLocaleString('en')} 2xx responses, warm-ups and checks included; ${payInFlight} in flight when the four duration runs stopped), ` +
      `${pc.paid_sum} ${CURRENCY} paid in all; the one invoice: ${pc.hot_payments.toLocaleString('en')} payments (${hot2xx.toLocaleString('en')} 2xx, ` +
      `${hotInFlight} in flight), amount_paid ${pc.hot_paid}: **${payOk ? 'OK' : 'MISMATCH'}**.`);

    // --- sendInvoice (email false) --------------------------------------------------------------
    // A margin: autocannon may prepare a request (calling setupRequest) that it never sends.
    const needed = 2 * SENDS_WARMUP + SENDS_CONCURRENT + SENDS_SEQUENTIAL + 4 * o.connections;
    let drafts = (await sql<{ id: string }[]>`
      select id from app.invoices where organization_id = ${org} and customer_id = ${customer} and status = 'draft'
       order by created_at, id limit ${needed}`).map((r) => r.id);
    if (drafts.length < needed) {
      log(`only ${drafts.length} drafts; creating ${needed - drafts.length} more`);
      for (let i = drafts.length; i < needed; i++) {
        const r = await post('/v1/invoices', JSON.parse(invoiceBody));
        if (r.status !== 201) throw new Error(`POST /v1/invoices: ${r.status} ${r.body.slice(0, 500)}`);
        drafts.push((JSON.parse(r.body) as { id: string }).id);
      }
    }
    drafts = drafts.slice(0, needed);
    const sendBody = JSON.stringify({ delivery: { email: false } });
    let d = 0;
    const sendRequests: RequestSpec[] = [{
      method: 'POST', path: '/v1/invoices/x/send', headers: postHeaders, body: sendBody,
      setupRequest: (req) => ({ ...req, path: `/v1/invoices/${drafts[d++]}/send`,
        headers: { ...req.headers, 'idempotency-key': freshKey() } }),
    }];
    const sendConcurrency = process.env.SVC_INVOICE_SEND_CONCURRENCY ?? '2 (default)';
    log(`POST /v1/invoices/{id}/send (email false, ${LINES}-line drafts): ${SENDS_WARMUP} warm-up, ${SENDS_CONCURRENT} with ` +
      `${o.connections} connections, ${SENDS_WARMUP} warm-up, ${SENDS_SEQUENTIAL} one at a time`);
    const sendWarm = await load({ requests: sendRequests, connections: Math.min(o.connections, SENDS_WARMUP), amount: SENDS_WARMUP });
    const { r: send, seconds: sendSeconds } = await counted({ requests: sendRequests, amount: SENDS_CONCURRENT });
    const sendSeqWarm = await load({ requests: sendRequests, connections: 1, amount: SENDS_WARMUP });
    const { r: sendSeq, seconds: sendSeqSeconds } = await counted({ requests: sendRequests, connections: 1, amount: SENDS_SEQUENTIAL });
    const send2xx = [sendWarm, send, sendSeqWarm, sendSeq].reduce((n, r) => n + ok2xx(r), 0);
    const [sendCheck] = await sql<{ sent: number; with_pdf: number; pdf_bytes: number; issued: number; distinct_numbers: number; counter: number }[]>`
      select count(*) filter (where i.status = 'sent')::int as sent,
             count(f.id)::int as with_pdf,
             coalesce(round(avg(f.size_bytes)), 0)::int as pdf_bytes,
             (select count(*)::int from app.invoices x where x.organization_id = ${org} and x.number is not null) as issued,
             (select count(distinct x.number)::int from app.invoices x where x.organization_id = ${org} and x.number is not null) as distinct_numbers,
             (select last_number::int from app_private.invoice_number_counters c where c.organization_id = ${org}) as counter
        from app.invoices i left join app.files f on f.id = i.pdf_file_id
       where i.id = any(${drafts}::text[])`;
    const sc = sendCheck!;
    const sendOk = sc.sent === send2xx && sc.with_pdf === send2xx && sc.issued === sc.distinct_numbers && sc.issued === sc.counter;
    if (!sendOk) failed.push('sendInvoice: database check');
    notes.push(`- sendInvoice: ${sc.sent} of the ${LINES}-line drafts sent for ${send2xx} 2xx responses (warm-ups included), ${sc.with_pdf} with ` +
      `a stored PDF (${sc.pdf_bytes.toLocaleString('en')} bytes on average); the organization has ${sc.issued.toLocaleString('en')} issued invoices, ` +
      `${sc.distinct_numbers.toLocaleString('en')} distinct numbers, counter at ${sc.counter?.toLocaleString('en')} (gapless): **${sendOk ? 'OK' : 'MISMATCH'}**. ` +
      `SVC_INVOICE_SEND_CONCURRENCY: ${sendConcurrency}.`);

    // --- Report -----------------------------------------------------------------------------------
    type Row = { name: string; r: Result; rate: number };
    const rows: Row[] = [
      { name: `POST /v1/invoices, ${LINES} lines, ${o.connections} connections, ${o.duration} s`, r: create, rate: create.requests.mean},
      { name: `POST /v1/invoices, ${LINES} lines, 1 connection (${SEQUENTIAL_CREATES} requests)`, r: createSeq,
        rate: createSeq.requests.total / createSeqSeconds},
      { name: `POST /v1/payments, round-robin over ${PAYMENT_INVOICES.toLocaleString('en')} invoices, ${o.connections} connections, ${o.duration} s`,
        r: spread, rate: spread.requests.mean},
      { name: `POST /v1/payments, all on one invoice, ${o.connections} connections, ${o.duration} s`, r: hotRun, rate: hotRun.requests.mean},
      { name: `POST /v1/invoices/{id}/send, email false, ${LINES} lines, ${o.connections} connections (${SENDS_CONCURRENT} requests)`, r: send,
        rate: send.requests.total / sendSeconds},
      { name: `POST /v1/invoices/{id}/send, email false, ${LINES} lines, 1 connection (${SENDS_SEQUENTIAL} requests)`, r: sendSeq,
        rate: sendSeq.requests.total / sendSeqSeconds},
    ];
    const warmups: [string, Result][] = [
      ['createInvoice warm-up', createWarm], ['createInvoice sequential warm-up', createSeqWarm], ['createPayment warm-up', spreadWarm],
      ['createPayment one-invoice warm-up', hotWarm], ['sendInvoice warm-up', sendWarm], ['sendInvoice sequential warm-up', sendSeqWarm],
    ];
    for (const row of rows) if (bad(row.r)) failed.push(row.name);
    for (const [name, r] of warmups) if (bad(r)) failed.push(name);
    const rate = (x: number) => (x >= 100 ? String(Math.round(x)) : x.toFixed(1));
    const lines_ = [
      `### Invoices (issue 5): createInvoice (${LINES} lines), createPayment, sendInvoice`,
      '',
      `The whole section took ${(ms(started) / 1000).toFixed(0)} s.`,
      '',
      '| measurement | req/s | p50 ms | p99 ms | requests | non-2xx |',
      '|---|---:|---:|---:|---:|---:|',
      ...rows.map(({ name, r, rate: x }) => `| ${name} | ${rate(x)} | ${r.latency.p50} | ${r.latency.p99} | ${r.requests.total} | ${r.non2xx} |`),
      '',
      `- Duration runs: ${o.warmup} s warm-up, then ${o.duration} s; req/s is autocannon's mean. Fixed-count runs (after ${SEQUENTIAL_WARMUP} ` +
        `resp. ${SENDS_WARMUP} warm-up requests): req/s = requests ÷ the time from the start to the last response. Every request has a fresh Idempotency-Key.`,
      `- Per line of a ${LINES}-line invoice: ${(createSeq.latency.p50 / LINES).toFixed(2)} ms (p50, one at a time); ` +
        `${Math.round(create.requests.mean * LINES).toLocaleString('en')} lines/s with ${o.connections} connections.`,
      `- One invoice ÷ spread payments req/s: **${(hotRun.requests.mean / spread.requests.mean).toFixed(2)}**.`,
      ...notes,
    ];
    for (const [name, r] of [...rows.map((x) => [x.name, x.r] as [string, Result]), ...warmups]) {
      if (r.errors || r.timeouts) lines_.push(`${name}: ${r.errors} connection errors, ${r.timeouts} timeouts`);
      if (r.non2xx) lines_.push(`${name}: status codes ${JSON.stringify(r.statusCodeStats)}`);
    }
    return { markdown: lines_.join('\n') + '\n', failed };
  } finally {
    await sql.end();
  }
}
