// Executes one run in the worker, as the run's client. The agent (built-in or model-backed) is
// TypeScript that decides what to do; everything it does goes through app_private.run_tool, which
// checks the agent, the client, the licence, the Roles, the subject and the connection in SQL and
// runs the skill as svc_runtime under the client's signed context. A run that needs the client's
// choice settles in requires_action with a checkpoint; submitRunAction queues it again and the
// agent resumes from that checkpoint with the answer in state.action.
import type postgres from 'postgres';
import type { Config } from '../config.ts';
import { schemaErrors } from '../http/json-schema.ts';
import { RunFailure, type AgentImpl, type AgentStep, type RunContext, type RunRecord, type ToolOutcome, type ToolSpec } from './agent.ts';
import { BUILTIN_AGENTS } from './builtins.ts';
import { chatAgent, modelAgent } from './model.ts';

/** The run stopped running (cancelled meanwhile): the agent stops, nothing is recorded. */
export class RunStopped extends Error {
  constructor(readonly status: string) { super(`the run is ${status}`); }
}

/** Whether `sql` reaches a Citus coordinator (asked once per pool). */
const citusOf = new WeakMap<postgres.Sql, Promise<boolean>>();
function onCitus(sql: postgres.Sql): Promise<boolean> {
  let known = citusOf.get(sql);
  if (!known) {
    known = sql<{ on: boolean }[]>`select exists (select from pg_extension where extname = 'citus') as on`.then((r) => r[0]!.on);
    known.catch(() => citusOf.delete(sql));
    citusOf.set(sql, known);
  }
  return known;
}

/** A step of a run appends to its log in the run's organization's worker, and on Citus notifies
 * there, where no stream listens (the API listens on the coordinator): the wake-up is sent again
 * on the coordinator (`wakeOn`). On one server the step's own NOTIFY is the wake-up. */
async function relayWake(wakeOn: postgres.Sql, runId: string): Promise<void> {
  // Best effort, after the step committed: a lost wake-up costs a stream its next heartbeat's look,
  // and must not fail a step that succeeded.
  try {
    if (await onCitus(wakeOn)) await wakeOn`select pg_notify('svc_run_events', app_private.run_wake_name(${runId}))`;
  } catch {
    // (The database is likely unreachable: the run's next statement says so.)
  }
}

function contextFor(sql: postgres.Sql, wakeOn: postgres.Sql, config: Config, run: RunRecord): RunContext {
  const call = async (skill: string, args: unknown, rejection: { code: string; message: string } | null): Promise<ToolOutcome> => {
    const [r] = await sql<{ outcome: any }[]>`
      select app_private.run_tool(${run.organization_id}, ${run.id}, ${skill}, ${sql.json(args as any)}, ${rejection ? sql.json(rejection) : null}) as outcome`;
    await relayWake(wakeOn, run.id);
    const outcome = r!.outcome;
    if (outcome.stopped) throw new RunStopped(outcome.stopped);
    return outcome as ToolOutcome;
  };
  const note = async (type: string, data: Record<string, unknown>) => {
    const [r] = await sql<{ ok: boolean }[]>`select app_private.run_note(${run.organization_id}, ${run.id}, ${type}, ${sql.json(data as any)}) as ok`;
    await relayWake(wakeOn, run.id);
    if (!r!.ok) throw new RunStopped('not running');
  };
  const ctx: RunContext = {
    run,
    config,
    async tool(skill, args) {
      const spec = run.tools.find((t) => t.name === skill);
      // Tool arguments are untrusted (a model chose them): checked like a request body, and a
      // refusal is recorded like any other call.
      const problems = spec && args && typeof args === 'object' && !Array.isArray(args)
        ? schemaErrors(`skill:${skill}`, spec.parameters, args, '', 'TOOL_ARGUMENTS_INVALID')
        : spec ? [{ pointer: '', detail: 'the arguments must be a JSON object', code: 'TOOL_ARGUMENTS_INVALID' }] : [];
      const safeArgs = args && typeof args === 'object' && !Array.isArray(args) ? args : {};
      if (problems.length) {
        return call(skill, safeArgs, { code: 'TOOL_ARGUMENTS_INVALID', message: problems.map((p) => p.detail).join('; ').slice(0, 500) });
      }
      return call(skill, safeArgs, null);
    },
    async required(skill, args) {
      const r = await ctx.tool(skill, args);
      if (!r.ok) throw new RunFailure(r.error.code, r.error.detail);
      return r.result;
    },
    async availableTools() {
      const [r] = await sql<{ tools: ToolSpec[] }[]>`select app_private.run_available_skills(${run.organization_id}, ${run.id}) as tools`;
      return r!.tools;
    },
    async conversation() {
      const [r] = await sql<{ c: Awaited<ReturnType<RunContext['conversation']>> }[]>`select app_private.chat_context(${run.organization_id}, ${run.id}) as c`;
      return r!.c;
    },
    progress: (message, data = {}) => note('run.progress', { message, ...data }),
    outputDelta: (text) => note('run.output.delta', { text }),
  };
  return ctx;
}

const settle = async (sql: postgres.Sql, wakeOn: postgres.Sql, organizationId: string, runId: string, outcome: string, payload: unknown,
  state: unknown = null) => {
  const [r] = await sql<{ status: string }[]>`
    select app_private.run_settle(${organizationId}, ${runId}, ${outcome}, ${sql.json(payload as any)}, ${state === null ? null : sql.json(state as any)}) as status`;
  await relayWake(wakeOn, runId);
  return r!.status;
};

/** One execution of a run (a graphile-worker job), its statements on `sql`, its wake-ups on
 * `wakeOn` (where the API listens). Unexpected errors are retried by the job; after the last
 * attempt the run fails with a generic, run-safe error. */
export async function executeRun(sql: postgres.Sql, config: Config, organizationId: string, runId: string,
  attempt: { attempts: number; maxAttempts: number } = { attempts: 1, maxAttempts: 1 }, wakeOn: postgres.Sql = sql): Promise<string> {
  const [row] = await sql<{ run: RunRecord | null }[]>`select app_private.run_start(${organizationId}, ${runId}) as run`;
  const run = row?.run;
  if (!run) return 'skipped';
  await relayWake(wakeOn, runId);
  let step: AgentStep;
  try {
    const impl: AgentImpl | undefined = run.engine === 'chat' ? chatAgent : run.engine === 'model' ? modelAgent : BUILTIN_AGENTS[run.agent_id ?? ''];
    if (!impl) throw new RunFailure('AGENT_UNAVAILABLE', `${run.agent_id} has no implementation in this service`);
    step = await impl(contextFor(sql, wakeOn, config, run));
  } catch (e) {
    if (e instanceof RunStopped) return e.status;
    if (!(e instanceof RunFailure) && attempt.attempts < attempt.maxAttempts) throw e;
    const error = e instanceof RunFailure ? { code: e.code, detail: e.detail } : { code: 'RUN_FAILED', detail: 'the run could not be completed' };
    return settle(sql, wakeOn, organizationId, runId, 'failed', error);
  }
  if ('action' in step) return settle(sql, wakeOn, organizationId, runId, 'requires_action', step.action, step.state);
  if (schemaErrors(`output:${run.agent_id ?? 'chat'}`, run.output_schema, step.done, '', 'AGENT_OUTPUT_INVALID').length) {
    return settle(sql, wakeOn, organizationId, runId, 'failed', { code: 'AGENT_OUTPUT_INVALID', detail: 'the agent\'s output did not match its output_schema' });
  }
  return settle(sql, wakeOn, organizationId, runId, 'succeeded', step.done);
}
