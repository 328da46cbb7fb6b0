// svc-admin approval: approval decisions made by a named user, which API Clients cannot make.
import { need, type CommandGroup } from './command.ts';

const DECISIONS = ['approved', 'rejected'] as const;

export const approvalCommands: CommandGroup = {
  name: 'approval',
  summary: 'Approval decisions made by a named user',
  commands: {
    decide: {
      summary: 'Decide an approval as a named user (moves the time entry)',
      prints: '{"approval_id","status","decided_by"}',
      flags: [
        { name: 'approval', value: 'ID', required: true, description: 'Approval id (apr_…)' },
        { name: 'decision', required: true, values: DECISIONS, description: 'The decision' },
        { name: 'by', value: 'EMAIL', required: true, description: 'An active member holding the Role the approval needs' },
      ],
      run: async (sql, f) => {
        await sql`select control.approval_decide(${need(f, 'approval')}, ${need(f, 'decision')}, ${need(f, 'by')})`;
        return { approval_id: f.approval, status: f.decision, decided_by: f.by!.trim().toLowerCase() };
      },
    },
  },
};
