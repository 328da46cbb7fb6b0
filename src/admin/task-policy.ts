// svc-admin task-policy: the organization's task policy.
import { ORG, need, bool, type CommandGroup } from './command.ts';

export const taskPolicyCommands: CommandGroup = {
  name: 'task-policy',
  summary: "The organization's task policy",
  commands: {
    set: {
      summary: "Change the organization's task policy (flags left out stay as they are)",
      prints: '{"organization_id","members_may_add_notes","allow_cross_project_dependencies"}',
      flags: [
        ORG,
        { name: 'members-may-add-notes', kind: 'boolean', description: 'Clients with only the member Role may add task notes' },
        { name: 'allow-cross-project-dependencies', kind: 'boolean', description: 'A task may depend on a task of another project' },
      ],
      run: async (sql, f) => {
        await sql`select control.task_policy_set(${need(f, 'org')}, ${bool(f, 'members-may-add-notes')}, ${bool(f, 'allow-cross-project-dependencies')})`;
        return { organization_id: f.org, members_may_add_notes: bool(f, 'members-may-add-notes'),
          allow_cross_project_dependencies: bool(f, 'allow-cross-project-dependencies') };
      },
    },
  },
};
