// The built-in agents: deterministic code over the skills, confirming every change they propose
// through requires_action before applying it. Their definitions (schemas, Roles, skills) are in
// db/migrations/20261206061100_baseline_agents_and_runs.sql (the rows of app_private.agent_definitions).
import type { AgentImpl, RequiredAction } from './agent.ts';

const confirmation = (id: string, description: string, choices: string[], extra: Record<string, object> = {},
  more: Record<string, unknown> = {}): RequiredAction => ({
  id, type: 'confirmation', description, ...more,
  schema: { type: 'object', additionalProperties: false, required: ['choice'], properties: { choice: { enum: choices }, ...extra } },
});

const echo: AgentImpl = async (ctx) => {
  await ctx.progress('echoing the input');
  return { done: { echo: ctx.run.input } };
};

const missingTime: AgentImpl = async (ctx) => {
  const { from, to } = ctx.run.input;
  const r = await ctx.required('time.missing_days', { from, to });
  return { done: { from, to, members: r.data.members } };
};

interface AttentionTask { id: string; status: string; overdue: boolean; open_predecessors: number; transitions: string[]; assignee_member_ids: string[]; version: number }
type ProposalBody = { task_id: string; reason: string } & ({ kind: 'transition'; transition: string } | { kind: 'assign'; assignee_member_ids: string[]; expected_version: number });
type Proposal = ProposalBody & { id: string };

/** Proposals from the tasks needing attention: block a task waiting on unfinished predecessors,
 * unblock one whose predecessors are done, assign an overdue unassigned task to the project's manager. */
function triageProposals(tasks: AttentionTask[], manager: string | null): Proposal[] {
  const out: Proposal[] = [];
  const add = (p: ProposalBody) => out.push({ ...p, id: `p${out.length + 1}` });
  for (const t of tasks) {
    if (t.status === 'blocked' && t.open_predecessors === 0 && t.transitions.includes('unblock')) {
      add({ kind: 'transition', task_id: t.id, transition: 'unblock', reason: 'blocked, but every predecessor is finished' });
    } else if (t.status !== 'blocked' && t.open_predecessors > 0 && t.transitions.includes('block')) {
      add({ kind: 'transition', task_id: t.id, transition: 'block', reason: `${t.open_predecessors} predecessor(s) not finished` });
    }
    if (t.overdue && t.assignee_member_ids.length === 0 && manager) {
      add({ kind: 'assign', task_id: t.id, assignee_member_ids: [manager], expected_version: t.version, reason: 'overdue and unassigned: to the project\'s manager' });
    }
  }
  return out;
}

const taskTriage: AgentImpl = async (ctx) => {
  const projectId: string = ctx.run.input.project_id;
  const action = ctx.run.state.action as { response: { choice: string; proposal_ids?: string[] } } | undefined;
  if (!action) {
    const found = await ctx.required('tasks.find_attention', { project_id: projectId });
    const proposals = triageProposals(found.data.tasks, found.data.manager_member_id ?? null);
    if (proposals.length === 0) return { done: { project_id: projectId, proposals: [], applied: [], failed: [], dismissed: false } };
    await ctx.progress(`${proposals.length} change(s) proposed for ${projectId}`);
    return {
      action: confirmation('confirm_triage', 'Apply the proposed changes (all, or those named in proposal_ids), or dismiss them.',
        ['apply', 'dismiss'], { proposal_ids: { type: 'array', uniqueItems: true, minItems: 1, items: { enum: proposals.map((p) => p.id) } } },
        { proposals }),
      state: { proposals },
    };
  }
  const proposals = ctx.run.state.proposals as Proposal[];
  if (action.response.choice === 'dismiss') return { done: { project_id: projectId, proposals, applied: [], failed: [], dismissed: true } };
  const chosen = action.response.proposal_ids ? proposals.filter((p) => action.response.proposal_ids!.includes(p.id)) : proposals;
  const applied: Proposal[] = [];
  const failed: (Proposal & { error: { code: string; detail: string } })[] = [];
  for (const p of chosen) {
    const r = p.kind === 'transition'
      ? await ctx.tool('tasks.transition', { task_id: p.task_id, transition: p.transition })
      : await ctx.tool('tasks.assign', { task_id: p.task_id, assignee_member_ids: p.assignee_member_ids, expected_version: p.expected_version });
    if (r.ok) applied.push(p); else failed.push({ ...p, error: r.error });
  }
  return { done: { project_id: projectId, proposals, applied, failed, dismissed: false } };
};

/** minutes → hours with two decimals, rounded half up, in integers only. */
const hours = (minutes: number) => {
  const hundredths = Math.floor((minutes * 100 + 30) / 60);
  return `${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, '0')}`;
};

const invoiceDraft: AgentImpl = async (ctx) => {
  const { customer_id, project_id, from, to, hourly_rate, currency } = ctx.run.input;
  const action = ctx.run.state.action as { response: { choice: string } } | undefined;
  if (!action) {
    const time = await ctx.required('invoices.billable_time', { project_id, from, to });
    const lines = (time.data.members as { member_id: string; minutes: number }[]).map((m) => ({
      description: `${m.member_id}: approved billable time ${from} to ${to}`, quantity: hours(m.minutes), unit_price: hourly_rate,
    }));
    if (lines.length === 0) return { done: { lines: [], invoice_id: null, total: null, currency: null } };
    await ctx.progress(`${lines.length} line(s) from approved billable time`);
    return {
      action: confirmation('confirm_invoice', 'Create a draft invoice with these lines, or cancel.', ['create', 'cancel'], {}, { lines }),
      state: { lines },
    };
  }
  const lines = ctx.run.state.lines as object[];
  if (action.response.choice === 'cancel') return { done: { lines, invoice_id: null, total: null, currency: null } };
  const made = await ctx.required('invoices.create_draft', { customer_id, lines, ...(currency ? { currency } : {}) });
  return { done: { lines, invoice_id: made.data.invoice_id, total: made.data.total, currency: made.data.currency } };
};

export const BUILTIN_AGENTS: Record<string, AgentImpl> = {
  agt_echo: echo,
  agt_missing_time: missingTime,
  agt_task_triage: taskTriage,
  agt_invoice_draft: invoiceDraft,
};
