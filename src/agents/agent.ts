// What an agent is to the engine that runs it: an AgentImpl takes a RunContext (the run, its
// tools, its progress) and returns a step. The engine and the agents (builtins.ts, model.ts) meet
// here, so an agent never imports the engine that imports it.
import type { Config } from '../config.ts';

export interface RunRecord {
  id: string; organization_id: string; client_id: string; kind: string; agent_id: string | null; engine: 'builtin' | 'model' | 'chat';
  input: Record<string, any>; subject: { member_id: string } | null; state: Record<string, any>; output_schema: object;
  tools: ToolSpec[]; conversation_id: string | null;
}

export interface ToolSpec { name: string; description: string; parameters: object }

export interface ToolResult { summary: string; resources: { type: string; id: string }[]; data: any }
export type ToolOutcome = { ok: true; result: ToolResult } | { ok: false; error: { code: string; detail: string } };

export interface RequiredAction {
  id: string; type: string; description: string;
  /** JSON Schema of the response: properties.choice.enum lists the accepted choices. */
  schema: { type: 'object'; required: string[]; properties: { choice: { enum: string[] } } & Record<string, object>; additionalProperties: false };
  [k: string]: unknown;
}

export type AgentStep = { done: Record<string, unknown> } | { action: RequiredAction; state: Record<string, unknown> };

/** A run-safe failure: its code and detail are what the run's `error` shows. */
export class RunFailure extends Error {
  constructor(readonly code: string, readonly detail: string) { super(detail); }
}

export interface RunContext {
  run: RunRecord;
  config: Config;
  /** One tool call, audited; arguments are checked against the skill's parameters_schema first. */
  tool(skill: string, args: unknown): Promise<ToolOutcome>;
  /** A tool call that must succeed: its failure fails the run with the tool's code. */
  required(skill: string, args: unknown): Promise<ToolResult>;
  /** The skills this client can use now (offered to a model). */
  availableTools(): Promise<ToolSpec[]>;
  progress(message: string, data?: Record<string, unknown>): Promise<void>;
  outputDelta(text: string): Promise<void>;
  /** A chat run's working context: the compact projection of older turns and the messages since. */
  conversation(): Promise<{ summary: string | null; messages: { role: 'user' | 'assistant'; content: Block[] }[] }>;
}

export type Block = { type: string; [k: string]: unknown };

export type AgentImpl = (ctx: RunContext) => Promise<AgentStep>;
