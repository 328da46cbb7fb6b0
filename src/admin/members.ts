// svc-admin member: the people of an organization.
import { ORG, ROLES_HINT, TIMEZONE_HINT, need, list, opt, type CommandGroup } from './command.ts';

const MEMBER_STATUSES = ['active', 'inactive'] as const;
const EMPLOYMENT_TYPES = ['employee', 'contractor', 'intern'] as const;

export const memberCommands: CommandGroup = {
  name: 'member',
  summary: 'Members (the people of an organization)',
  commands: {
    add: {
      summary: 'Add a member to an organization',
      prints: '{"member_id"}',
      flags: [
        ORG,
        { name: 'email', value: 'EMAIL', required: true, description: 'Email address; the member id (kept in lower case)' },
        { name: 'name', value: 'NAME', required: true, description: 'Display name' },
        { name: 'roles', kind: 'list', value: 'ROLES', description: `${ROLES_HINT} (default member)` },
        { name: 'job-title', value: 'TEXT', description: 'Job title' },
        { name: 'timezone', value: 'TZ', description: TIMEZONE_HINT },
        { name: 'status', values: MEMBER_STATUSES, description: 'Status (default active)' },
        { name: 'employee-number', value: 'TEXT', description: 'Employee number' },
        { name: 'hire-date', value: 'YYYY-MM-DD', description: 'Hire date' },
        { name: 'employment-type', values: EMPLOYMENT_TYPES, description: 'Employment type' },
      ],
      run: async (sql, f) => {
        const [r] = await sql`select control.member_add(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'name')},
          ${list(f.roles)}::text[], ${opt(f, 'job-title')}, ${opt(f, 'timezone')}, ${opt(f, 'status')},
          ${opt(f, 'employee-number')}, ${opt(f, 'hire-date')}::date, ${opt(f, 'employment-type')}) as id`;
        return { member_id: r!.id };
      },
    },
    'set-status': {
      summary: "Change a member's status",
      prints: '{"member_id","status"}',
      flags: [
        ORG,
        { name: 'email', value: 'EMAIL', required: true, description: "The member's email address" },
        { name: 'status', required: true, values: MEMBER_STATUSES, description: 'New status' },
      ],
      run: async (sql, f) => {
        await sql`select control.member_set_status(${need(f, 'org')}, ${need(f, 'email')}, ${need(f, 'status')})`;
        return { member_id: f.email!.trim().toLowerCase(), status: f.status };
      },
    },
  },
};
