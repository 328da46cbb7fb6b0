// svc-admin invoice: the accounting synchronization of invoices.
import { need, type CommandGroup } from './command.ts';

export const invoiceCommands: CommandGroup = {
  name: 'invoice',
  summary: 'Invoices: accounting synchronization',
  commands: {
    resync: {
      summary: 'Queue a failed accounting sync again (after the provider problem is fixed)',
      prints: '{"invoice_id","accounting_sync"}',
      flags: [{ name: 'invoice', value: 'ID', required: true, description: 'Invoice id (inv_…)' }],
      run: async (sql, f) => {
        await sql`select control.invoice_sync_retry(${need(f, 'invoice')})`;
        return { invoice_id: f.invoice, accounting_sync: 'pending' };
      },
    },
  },
};
