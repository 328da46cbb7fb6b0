// svc-admin integration: integration connections, which API Clients only read.
import { ORG, need, list, opt, bool, type CommandGroup } from './command.ts';

const OWNERSHIPS = ['organization', 'personal'] as const;
const CONNECTION_STATUSES = ['connected', 'action_required', 'error', 'disconnected'] as const;

export const integrationCommands: CommandGroup = {
  name: 'integration',
  summary: 'Integration connections (accounting, calendar, …)',
  commands: {
    add: {
      summary: 'Record an integration connection',
      prints: '{"connection_id"}',
      flags: [
        ORG,
        { name: 'provider', value: 'NAME', required: true, description: 'Provider, e.g. sandbox or xero (a-z 0-9 _ . -)' },
        // An open set in the database (letters and _), so not checked here.
        { name: 'category', value: 'NAME', required: true,
          description: 'Category, e.g. accounting, calendar, messaging; accounting is read by finance, others by manager' },
        { name: 'ownership', values: OWNERSHIPS, description: 'Whose connection it is (default organization)' },
        { name: 'owner-member', value: 'EMAIL', description: 'The member owning a personal connection (with --ownership personal)' },
        { name: 'status', values: CONNECTION_STATUSES, description: 'Status (default connected)' },
        { name: 'capabilities', kind: 'list', value: 'A,B', description: 'Comma-separated capabilities, e.g. invoice.export,payment.read' },
        { name: 'action-required', value: 'TEXT', description: 'What an administrator must do, up to 500 characters' },
      ],
      run: async (sql, f) => {
        const [r] = await sql`select control.integration_add(${need(f, 'org')}, ${need(f, 'provider')}, ${need(f, 'category')},
          ${f.ownership ?? 'organization'}, ${f.status ?? 'connected'}, ${list(f.capabilities ?? '')}::text[], ${opt(f, 'action-required')},
          ${opt(f, 'owner-member')}) as id`;
        return { connection_id: r!.id };
      },
    },
    update: {
      summary: 'Change an integration connection (flags left out stay as they are)',
      prints: '{"connection_id","updated"}',
      flags: [
        { name: 'id', value: 'ID', required: true, description: 'Connection id (icn_…)' },
        { name: 'status', values: CONNECTION_STATUSES, description: 'New status' },
        { name: 'capabilities', kind: 'list', value: 'A,B', description: 'Comma-separated capabilities (replaces them)' },
        { name: 'action-required', value: 'TEXT', description: 'What an administrator must do, up to 500 characters' },
        { name: 'clear-action-required', kind: 'boolean', description: 'Remove the action-required text' },
      ],
      run: async (sql, f) => {
        await sql`select control.integration_update(${need(f, 'id')}, ${opt(f, 'status')},
          ${f.capabilities === undefined ? null : list(f.capabilities)}::text[], ${opt(f, 'action-required')},
          ${bool(f, 'clear-action-required') === true})`;
        return { connection_id: f.id, updated: true };
      },
    },
  },
};
