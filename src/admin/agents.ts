// svc-admin agent: which catalogue agents an organization may use.
import { need, type CommandGroup } from './command.ts';

export const agentCommands: CommandGroup = {
  name: 'agent',
  summary: 'Agents: publication per organization',
  commands: {
    publish: {
      summary: 'Publish a catalogue agent in an organization (new organizations start with every agent published)',
      prints: '{"organization_id","agent_id","status"}',
      flags: [{ name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' },
        { name: 'agent', value: 'ID', required: true, description: 'Agent id (agt_…)' }],
      run: async (sql, f) => {
        const [r] = await sql<{ status: string }[]>`select control.agent_set_published(${need(f, 'org')}, ${need(f, 'agent')}, true) as status`;
        return { organization_id: f.org, agent_id: f.agent, status: r!.status };
      },
    },
    unpublish: {
      summary: 'Unpublish an agent: clients get AGENT_NOT_PUBLISHED, and tool calls of its running runs are refused',
      prints: '{"organization_id","agent_id","status"}',
      flags: [{ name: 'org', value: 'ID', required: true, description: 'Organization id (org_…)' },
        { name: 'agent', value: 'ID', required: true, description: 'Agent id (agt_…)' }],
      run: async (sql, f) => {
        const [r] = await sql<{ status: string }[]>`select control.agent_set_published(${need(f, 'org')}, ${need(f, 'agent')}, false) as status`;
        return { organization_id: f.org, agent_id: f.agent, status: r!.status };
      },
    },
  },
};
