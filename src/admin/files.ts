// svc-admin file: legal holds on files.
import { need, type CommandGroup } from './command.ts';

export const fileCommands: CommandGroup = {
  name: 'file',
  summary: 'Files: legal holds',
  commands: {
    hold: {
      summary: 'Put a file under a legal hold: it cannot be archived until released',
      prints: '{"file_id","legal_hold"}',
      flags: [{ name: 'file', value: 'ID', required: true, description: 'File id (fil_…)' }],
      run: async (sql, f) => {
        await sql`select control.file_set_legal_hold(${need(f, 'file')}, true)`;
        return { file_id: f.file, legal_hold: true };
      },
    },
    release: {
      summary: 'Release a legal hold',
      prints: '{"file_id","legal_hold"}',
      flags: [{ name: 'file', value: 'ID', required: true, description: 'File id (fil_…)' }],
      run: async (sql, f) => {
        await sql`select control.file_set_legal_hold(${need(f, 'file')}, false)`;
        return { file_id: f.file, legal_hold: false };
      },
    },
  },
};
