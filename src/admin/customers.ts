// svc-admin customer: companies (of projects) and billing customers (of invoices).
import { ORG, need, opt, type CommandGroup } from './command.ts';

const CUSTOMER_KINDS = ['company', 'billing'] as const;

export const customerCommands: CommandGroup = {
  name: 'customer',
  summary: 'Customers (companies and billing customers)',
  commands: {
    create: {
      summary: 'Create a customer',
      prints: '{"customer_id"}',
      flags: [
        ORG,
        { name: 'kind', required: true, values: CUSTOMER_KINDS, description: 'company (for projects) or billing (invoiced)' },
        { name: 'name', value: 'NAME', required: true, description: 'Name of the customer' },
        { name: 'email', value: 'EMAIL', description: 'Address invoices are emailed to' },
        { name: 'currency', value: 'CODE', description: 'Currency, ISO 4217 (e.g. EUR)' },
      ],
      run: async (sql, f) => {
        const [r] = await sql`select control.customer_create(${need(f, 'org')}, ${need(f, 'kind')}, ${need(f, 'name')},
          ${opt(f, 'email')}, ${opt(f, 'currency')}) as id`;
        return { customer_id: r!.id };
      },
    },
    delete: {
      summary: 'Delete a customer',
      prints: '{"customer_id","deleted"}',
      flags: [ORG, { name: 'customer', value: 'ID', required: true, description: 'Customer id (com_… or cus_…)' }],
      run: async (sql, f) => {
        await sql`select control.customer_delete(${need(f, 'org')}, ${need(f, 'customer')})`;
        return { customer_id: f.customer, deleted: true };
      },
    },
  },
};
