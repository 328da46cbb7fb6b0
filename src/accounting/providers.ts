// Accounting providers behind one interface: the sync job knows only this. Each adapter keeps
// its own credentials (none are stored with the connection) and reports failures in words that
// are safe to show a client: they become the invoice's accounting_sync.error.

export interface AccountingInvoice {
  id: string; number: string; currency: string; issue_date: string; due_date: string;
  subtotal: string; tax_total: string; total: string;
  lines: { description: string; quantity: string; unit_price: string; tax_rate: string; amount: string }[];
}
export interface AccountingCustomer { id: string; name: string; email: string | null }

export interface AccountingProvider {
  /** Creates the invoice at the provider; the provider's reference comes back. Must be idempotent
   * by invoice id: a retried job may call it again. */
  exportInvoice(invoice: AccountingInvoice, customer: AccountingCustomer): Promise<{ externalReference: string }>;
  /** Voids an invoice exported earlier. */
  voidInvoice(externalReference: string, invoice: AccountingInvoice): Promise<void>;
}

/** A failure the adapter has described; `retryable` says whether trying again can help. A
 * non-retryable failure promises that the provider does not hold the invoice (it refused it, or was
 * never called), so the invoice may be voided locally. */
export class ProviderError extends Error {
  constructor(message: string, readonly retryable: boolean) {
    super(message);
  }
}

/** The built-in sandbox ledger: accepts everything and answers with a stable reference. It lets
 * an organization (and the tests) exercise the whole sync without a provider account. */
export const sandbox: AccountingProvider = {
  async exportInvoice(invoice) {
    return { externalReference: `SBX-${invoice.number}` };
  },
  async voidInvoice() {},
};

const adapters = new Map<string, AccountingProvider>([['sandbox', sandbox]]);

/** Adapters are registered by provider name (the connection's `provider`). */
export function registerAccountingProvider(name: string, adapter: AccountingProvider): void {
  adapters.set(name, adapter);
}

export function accountingProvider(name: string): AccountingProvider {
  const adapter = adapters.get(name);
  if (!adapter) throw new ProviderError(`no adapter for the accounting provider ${name} is installed on this service`, false);
  return adapter;
}
