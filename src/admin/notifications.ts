// svc-admin notifications: notices for administrators.
import { ORG, need, type CommandGroup } from './command.ts';

export const notificationCommands: CommandGroup = {
  name: 'notifications',
  summary: 'Notices for administrators',
  commands: {
    list: {
      summary: "List an organization's notices, e.g. webhook endpoints disabled after failures",
      prints: '{"notifications":[…]}',
      flags: [ORG],
      run: async (sql, f) => {
        const rows = await sql`select id, kind, subject_id, detail, created_at from control.notifications_list(${need(f, 'org')})`;
        return { notifications: rows.map((r) => ({ ...r, id: Number(r.id) })) };
      },
    },
  },
};
