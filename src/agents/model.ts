// Model-backed agents through an OpenAI-compatible chat-completions API with tool calling (the
// common denominator of OpenAI, Ollama, vLLM and llama.cpp's server). The tools offered are the
// skills this client can use now; every call the model asks for goes through the same checked,
// audited path as a built-in agent's (RunContext.tool), and its result goes back to the model.
// The prompt, the model's messages and the provider's credentials are never stored in the run, an
// event or a log: the run keeps its input, tool summaries and the final text only.
import type { Config } from '../config.ts';
import { RunFailure, type AgentImpl, type Block, type RunContext, type ToolSpec } from './agent.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

const SYSTEM_PROMPT = 'You are the work-management assistant of an organization, acting for an API client. '
  + 'Use the tools to read or change work data; a tool refuses what the client may not do, and you report that plainly. '
  + 'Never claim to approve anything or to act as a person. Answer concisely.';

/** Skill names hold a dot; function names of the API allow [A-Za-z0-9_-] only. */
const toolName = (skill: string) => skill.replace('.', '__');
const skillOf = (name: string) => name.replace('__', '.');

async function complete(config: Config['agents'], messages: ChatMessage[], tools: ToolSpec[]): Promise<ChatMessage> {
  let res: Response;
  try {
    res = await fetch(`${config.modelUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(config.modelApiKey ? { authorization: `Bearer ${config.modelApiKey}` } : {}) },
      body: JSON.stringify({
        model: config.model, messages,
        ...(tools.length ? { tools: tools.map((t) => ({ type: 'function', function: { name: toolName(t.name), description: t.description, parameters: t.parameters } })) } : {}),
      }),
      signal: AbortSignal.timeout(config.modelTimeoutMs),
    });
  } catch {
    throw new RunFailure('MODEL_PROVIDER_UNAVAILABLE', 'the model provider did not answer');
  }
  // Only the status reaches the run: a provider's body may echo the prompt or name its account.
  if (!res.ok) throw new RunFailure('MODEL_PROVIDER_UNAVAILABLE', `the model provider answered HTTP ${res.status}`);
  let body: { choices?: { message?: ChatMessage }[] };
  try {
    body = await res.json() as typeof body;
  } catch {
    throw new RunFailure('MODEL_PROVIDER_UNAVAILABLE', 'the model provider\'s answer was not JSON');
  }
  const message = body.choices?.[0]?.message;
  if (!message || typeof message !== 'object') throw new RunFailure('MODEL_PROVIDER_UNAVAILABLE', 'the model provider\'s answer had no message');
  return message;
}

/** Talks with the model until it answers without asking for tools; returns that answer. */
export async function converse(ctx: RunContext, history: ChatMessage[]): Promise<string> {
  const config = ctx.config.agents;
  if (!config.modelUrl) throw new RunFailure('AGENT_UNAVAILABLE', 'no model provider is configured for this service');
  const tools = await ctx.availableTools();
  const messages: ChatMessage[] = [{ role: 'system', content: SYSTEM_PROMPT }, ...history];
  for (let step = 0; step < config.maxModelSteps; step++) {
    const reply = await complete(config, messages, tools);
    const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
    if (calls.length === 0) return typeof reply.content === 'string' ? reply.content : '';
    messages.push({ role: 'assistant', content: reply.content ?? null, tool_calls: calls });
    for (const c of calls) {
      let args: unknown;
      try { args = JSON.parse(c.function?.arguments || '{}'); } catch { args = undefined; }
      const outcome = await ctx.tool(skillOf(String(c.function?.name ?? '')), args);
      messages.push({ role: 'tool', tool_call_id: c.id,
        content: JSON.stringify(outcome.ok ? outcome.result.data : { error: outcome.error }) });
    }
  }
  throw new RunFailure('MODEL_STEP_LIMIT', `the model did not finish within ${config.maxModelSteps} steps`);
}

export const modelAgent: AgentImpl = async (ctx) => {
  const text = await converse(ctx, [{ role: 'user', content: String(ctx.run.input.prompt ?? '') }]);
  await ctx.outputDelta(text);
  return { done: { text } };
};

/** A message's blocks as the text the model reads. */
function blocksText(blocks: Block[]): string {
  return blocks.map((b) => {
    switch (b.type) {
      case 'text': return String(b.text ?? '');
      case 'data': return `[data${b.label ? ` ${String(b.label)}` : ''}] ${JSON.stringify(b.data)}`;
      case 'file_reference': return `[file ${String(b.file_id)}]`;
      case 'citation': return `[citation ${JSON.stringify(b.source)}] ${String(b.text ?? '')}`;
      case 'error': return `[error ${String(b.code)}] ${String(b.message ?? '')}`;
      default: return '';
    }
  }).join('\n');
}

/** A chat run: the conversation's working context (its compact projection first), then the model. */
export const chatAgent: AgentImpl = async (ctx) => {
  const { summary, messages } = await ctx.conversation();
  const history: ChatMessage[] = [
    ...(summary ? [{ role: 'system' as const, content: `Earlier turns of this conversation, compacted:\n${summary}` }] : []),
    ...messages.map((m) => ({ role: m.role, content: blocksText(m.content) })),
  ];
  const text = await converse(ctx, history);
  await ctx.outputDelta(text);
  return { done: { text } };
};
