// What the bench parts (tasks, time entries, invoices) share: their options and result shape, the
// autocannon request types, a logger, a timer and the control-plane call.
import type { Options } from 'autocannon';
import { readdirSync, readFileSync } from 'node:fs';
import { run as admin } from '../src/admin/cli.ts';

export interface BenchOptions {
  /** Owner (superuser) URL of the bench database. */
  url: string;
  /** Base URL of the running server. */
  base: string;
  token: string;
  clientId: string;
  connections: number;
  duration: number;
  warmup: number;
}

export interface BenchResult {
  markdown: string;
  /** Names of measurements that saw non-2xx responses or errors, or failed a check. */
  failed: string[];
}

export type RequestSpec = { method?: string; path?: string; headers?: Record<string, string>; body?: string;
  setupRequest?: (req: RequestSpec, context: unknown) => RequestSpec };
export type LoadOptions = Options & { requests?: RequestSpec[]; amount?: number };

export const logger = (part: string) => (msg: string) => process.stderr.write(`[bench:${part}] ${msg}\n`);
export const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function cli(url: string, ...argv: string[]): Promise<Record<string, unknown>> {
  const r = await admin(argv, url);
  if (r.code !== 0) throw new Error(`svc-admin ${argv.join(' ')}: ${JSON.stringify(r.err)}`);
  return r.out as Record<string, unknown>;
}

/** The largest resident set (VmRSS, KiB) among the live processes of a process group (the server's node process). */
export function serverRssKb(group: number): number {
  let best = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== group) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) best = Math.max(best, Number(rss[1]));
    } catch { /* gone */ }
  }
  return best;
}
