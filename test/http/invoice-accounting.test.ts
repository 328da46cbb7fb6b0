// The accounting side of invoices: a required connection must be ready to send, the sync job behind
// the provider adapter interface with a provider-neutral status, voidInvoice's provider constraints,
// and `svc-admin invoice resync`.
import t from 'tap';
import { assertProblem } from '../helpers/app.ts';
import { sleep } from '../helpers/receiver.ts';
import { idem, world } from '../helpers/invoices.ts';
import { startWorker } from '../../src/worker/index.ts';
import { accountingSync } from '../../src/worker/jobs/accounting-sync.ts';
import { ProviderError, registerAccountingProvider } from '../../src/accounting/providers.ts';
import { run as admin } from '../../src/admin/cli.ts';

t.test('accounting: a required connection must be ready; the sync job records a provider-neutral status', async (t) => {
  const { a, p, draft, send, get, events } = await world(t);
  await a.cli('org', 'set-policy', '--org', p.orgId, '--invoices-require-accounting-connection', 'true');
  const inv = await draft();
  const none = await send(inv.id);
  assertProblem(t, none, 409, 'ACCOUNTING_CONNECTION_NOT_READY');
  t.match(none.json.detail, /none offers invoice\.export/);
  const conn = (await a.cli('integration', 'add', '--org', p.orgId, '--provider', 'sandbox', '--category', 'accounting',
    '--status', 'action_required', '--capabilities', 'invoice.export', '--action-required', 'Reconnect the ledger in Settings > Integrations')).connection_id;
  const notReady = await send(inv.id);
  assertProblem(t, notReady, 409, 'ACCOUNTING_CONNECTION_NOT_READY');
  t.match(notReady.json.detail, /Reconnect the ledger/);
  t.match(await get(inv.id), { status: 'draft', number: null });

  await a.cli('integration', 'update', '--id', conn, '--status', 'connected', '--clear-action-required', 'true');
  const sent = await send(inv.id);
  t.equal(sent.statusCode, 200, sent.body);
  t.match(sent.json.accounting_sync, { status: 'pending', connection_id: conn, external_reference: null, synced_at: null });
  t.notOk(JSON.stringify(sent.json).match(/token|secret|credential/i), 'nothing provider-private in the invoice');
  // (On Citus a job waits in its organization's outbox until the worker moves it into the queue: moved now.)
  await a.admin`select app_private.job_outbox_drain()`;
  const [job] = await a.admin`select t.identifier as task_identifier, j.payload from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id where j.key = ${'accounting_sync:' + inv.id}`;
  t.match(job, { task_identifier: 'accounting_sync', payload: { invoice_id: inv.id, action: 'export', organization_id: p.orgId } },
    'queued with the send, naming its organization');

  // Provider constraint: no void while the sync is in flight.
  const inFlight = await a.request({ method: 'POST', url: `/v1/invoices/${inv.id}/void`, token: p.token, headers: idem() });
  assertProblem(t, inFlight, 409, 'WORKFLOW_BLOCKED');
  t.match(inFlight.json.detail, /being synchronized/);

  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  let synced: any;
  for (let i = 0; i < 400 && synced?.accounting_sync?.status !== 'synced'; i++) { await sleep(50); synced = await get(inv.id); }
  t.match(synced, { status: 'sent', version: 3, accounting_sync: { status: 'synced', external_reference: 'SBX-INV-000001', synced_at: /Z$/, error: null } });
  t.same(await events(inv.id), ['invoice.created', 'invoice.sent', 'invoice.updated']);

  // Provider constraints on void: the connection must be ready and able to void.
  const voidIt = () => a.request({ method: 'POST', url: `/v1/invoices/${inv.id}/void`, token: p.token, headers: idem() });
  await a.cli('integration', 'update', '--id', conn, '--status', 'error');
  assertProblem(t, await voidIt(), 409, 'ACCOUNTING_CONNECTION_NOT_READY');
  await a.cli('integration', 'update', '--id', conn, '--status', 'connected');
  const cannot = await voidIt();
  assertProblem(t, cannot, 409, 'WORKFLOW_BLOCKED');
  t.match(cannot.json.detail, /no invoice\.void capability\); an administrator enables voiding/);
  await a.cli('integration', 'update', '--id', conn, '--capabilities', 'invoice.export,invoice.void');
  const voided = await voidIt();
  t.equal(voided.statusCode, 200, voided.body);
  t.match(voided.json, { status: 'void', amount_due: '0.00', accounting_sync: { status: 'pending', external_reference: 'SBX-INV-000001' } });
  let after: any;
  for (let i = 0; i < 400 && after?.accounting_sync?.status !== 'synced'; i++) { await sleep(50); after = await get(inv.id); }
  t.match(after, { status: 'void', accounting_sync: { status: 'synced' } }, 'the void was synchronized too');
});

t.test('accounting: failures are recorded in safe words, retried while retryable, and queued again by an administrator', async (t) => {
  const { a, p, draft, send, get } = await world(t);
  await a.cli('integration', 'add', '--org', p.orgId, '--provider', 'ledgerly', '--category', 'accounting',
    '--status', 'connected', '--capabilities', 'invoice.export');
  const [inv, other] = [await draft(), await draft()];
  t.equal((await send(inv.id)).json.accounting_sync.status, 'pending', 'not required, but used when connected');
  await send(other.id);
  const worker = await startWorker(a.config, { pollInterval: 50 });
  t.teardown(() => worker.stop());
  const until = async (id: string, status: string) => {
    let doc: any;
    for (let i = 0; i < 400 && doc?.accounting_sync?.status !== status; i++) { await sleep(50); doc = await get(id); }
    return doc;
  };
  t.match((await until(inv.id, 'failed')).accounting_sync,
    { status: 'failed', external_reference: null, error: /no adapter for the accounting provider ledgerly/ }, 'no adapter: a permanent failure');
  await until(other.id, 'failed');
  // A failed export does not block a void (the provider does not hold the invoice).
  const v = await a.request({ method: 'POST', url: `/v1/invoices/${other.id}/void`, token: p.token, headers: idem() });
  t.equal(v.statusCode, 200, v.body);

  // The adapter interface, called directly (the worker stopped): a retryable failure is thrown back
  // to graphile-worker until the last attempt; then the invoice shows the adapter's words, or a
  // generic reason for anything else.
  await worker.stop();
  let calls = 0;
  registerAccountingProvider('ledgerly', {
    async exportInvoice(invoice) {
      calls++;
      if (invoice.number.endsWith('1') && calls === 1) throw new ProviderError('ledgerly is rate limiting; retrying', true);
      return { externalReference: `LDG-${invoice.number}` };
    },
    async voidInvoice() {},
  });
  t.teardown(() => registerAccountingProvider('ledgerly', { exportInvoice: async () => { throw new Error('x'); }, voidInvoice: async () => {} }));
  await a.admin`update app.invoices set sync_status = 'pending' where id = ${inv.id}`;
  await t.rejects(accountingSync(a.admin, p.orgId, inv.id, 'export', { attempts: 1, maxAttempts: 8 }), /rate limiting/, 'retryable: thrown for a retry');
  t.equal((await get(inv.id)).accounting_sync.status, 'pending', 'still pending between attempts');
  t.equal(await accountingSync(a.admin, p.orgId, inv.id, 'export', { attempts: 2, maxAttempts: 8 }), 'synced');
  t.match((await get(inv.id)).accounting_sync, { status: 'synced', external_reference: 'LDG-INV-000001', error: null });

  registerAccountingProvider('ledgerly', { exportInvoice: async () => { throw new Error('HTTP 500 from https://api.ledgerly.example?token=abc'); }, voidInvoice: async () => {} });
  const third = await draft();
  await send(third.id);
  t.equal(await accountingSync(a.admin, p.orgId, third.id, 'export', { attempts: 8, maxAttempts: 8 }), 'failed');
  const failed = (await get(third.id)).accounting_sync;
  t.equal(failed.error, 'the accounting provider did not answer', 'an unexpected error is not shown to clients');
  const unknown = await a.request({ method: 'POST', url: `/v1/invoices/${third.id}/void`, token: p.token, headers: idem() });
  assertProblem(t, unknown, 409, 'WORKFLOW_BLOCKED');
  t.match(unknown.json.detail, /without a definite answer/, 'the provider may hold it: no local void');

  // An administrator queues it again once the provider is fixed.
  registerAccountingProvider('ledgerly', { exportInvoice: async (i) => ({ externalReference: `LDG-${i.number}` }), voidInvoice: async () => {} });
  const notFailed = await admin(['invoice', 'resync', '--invoice', inv.id], a.adminUrl);
  t.match(notFailed, { code: 1, err: { error: 'INVOICE_SYNC_NOT_FAILED' } }, 'only a failed sync is queued again');
  t.same((await admin(['invoice', 'resync', '--invoice', third.id], a.adminUrl)).out, { invoice_id: third.id, accounting_sync: 'pending' });
  await a.admin`select app_private.job_outbox_drain()`;
  const [job] = await a.admin`select count(*)::int as n from graphile_worker._private_jobs where key = ${'accounting_sync:' + third.id}`;
  t.equal(job!.n, 1, 'queued again');
  t.equal(await accountingSync(a.admin, p.orgId, third.id, 'export', { attempts: 1, maxAttempts: 8 }), 'synced');

  // Issued while the connection was not ready: no sync; once it is ready, an administrator exports it.
  const [conn] = await a.admin`select id from app.integration_connections where organization_id = ${p.orgId}`;
  await a.cli('integration', 'update', '--id', conn!.id, '--status', 'error');
  const late = await draft();
  t.equal((await send(late.id)).json.accounting_sync, null, 'not synchronized while the connection is in error');
  t.match(await admin(['invoice', 'resync', '--invoice', late.id], a.adminUrl), { code: 1, err: { error: 'INVOICE_SYNC_NOT_FAILED' } });
  await a.cli('integration', 'update', '--id', conn!.id, '--status', 'connected');
  await a.cli('invoice', 'resync', '--invoice', late.id);
  t.match((await get(late.id)).accounting_sync, { status: 'pending', connection_id: conn!.id });
  t.equal(await accountingSync(a.admin, p.orgId, late.id, 'export', { attempts: 1, maxAttempts: 8 }), 'synced');
  t.match((await get(late.id)).accounting_sync, { status: 'synced', external_reference: 'LDG-INV-000004' });
});
