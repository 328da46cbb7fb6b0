// accounting_sync (one per issued or voided synchronized invoice): the provider adapter's call, and
// the provider-neutral outcome on the invoice.
import type postgres from 'postgres';
import { accountingProvider, ProviderError, type AccountingCustomer, type AccountingInvoice } from '../../accounting/providers.ts';
import type { Attempt } from './attempt.ts';

interface SyncLoad {
  invoice: AccountingInvoice; provider: string; sync_status: string | null; external_reference: string | null; customer: AccountingCustomer;
}

/** One sync: export or void at the provider, then record the outcome. Failures the adapter calls
 * retryable (and anything unexpected) are retried by graphile-worker until the last attempt. */
export async function accountingSync(sql: postgres.Sql, organizationId: string, invoiceId: string, action: 'export' | 'void',
  attempt: Attempt): Promise<string> {
  const [row] = await sql<{ data: SyncLoad | null }[]>`select app_private.accounting_sync_load(${organizationId}, ${invoiceId}) as data`;
  const data = row?.data;
  if (!data || data.sync_status !== 'pending') return 'skipped';
  let reference: string | null = data.external_reference;
  try {
    const adapter = accountingProvider(data.provider);
    if (action === 'void') {
      if (reference) await adapter.voidInvoice(reference, data.invoice);
    } else {
      reference = (await adapter.exportInvoice(data.invoice, data.customer)).externalReference;
    }
  } catch (e) {
    const retryable = !(e instanceof ProviderError) || e.retryable;
    if (retryable && attempt.attempts < attempt.maxAttempts) throw e;
    // Only an adapter's own words reach the invoice; anything else could carry provider internals.
    const reason = e instanceof ProviderError ? e.message : 'the accounting provider did not answer';
    // Definitive only when the adapter said so (the provider does not hold the invoice); retries
    // that ran out leave the outcome unknown, which blocks a void until the sync is repeated.
    const definitive = e instanceof ProviderError && !e.retryable;
    await sql`select app_private.accounting_sync_record(${organizationId}, ${invoiceId}, false, null, ${reason}, ${definitive})`;
    return 'failed';
  }
  await sql`select app_private.accounting_sync_record(${organizationId}, ${invoiceId}, true, ${reference}, null)`;
  return 'synced';
}
