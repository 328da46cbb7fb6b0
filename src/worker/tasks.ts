// The job kinds graphile-worker runs, by the name app_private.queue_job gives them, and the crontab of
// the periodic ones. Each kind's work is in jobs/ (agent_run's in src/agents/engine.ts); the periodic
// ones are one statement each, here.
import type postgres from 'postgres';
import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import type { Config } from '../config.ts';
import type { Transport } from '../webhooks/transport.ts';
import type { Mailer } from '../invoices/mailer.ts';
import type { Metrics } from '../observability/metrics.ts';
import { executeRun } from '../agents/engine.ts';
import { deliver, fanout } from './jobs/webhooks.ts';
import { accountingSync } from './jobs/accounting-sync.ts';
import { scanFile } from './jobs/file-scan.ts';
import { runReport } from './jobs/report-run.ts';
import { sendTicketReply } from './jobs/ticket-reply-email.ts';
import { attemptOf } from './jobs/attempt.ts';
import type { JobConnections } from './nodes.ts';

export interface TaskDependencies {
  /** svc_worker's pool on the database (a cluster's coordinator): the periodic jobs'. */
  sql: postgres.Sql;
  /** svc_worker's connections where an organization's rows are (nodes.ts): its jobs'. */
  connections: JobConnections;
  config: Config;
  transport: Transport;
  mailer: Mailer;
  metrics: Metrics;
  /** Wakes this process's fan-out loop (fanout-loop.ts). */
  wakeFanout: () => void;
  /** Whether the database is a Citus coordinator: undefined until it has answered. */
  onCitus: () => boolean | undefined;
}

/** A job of one organization, given the connections where its rows are. */
type OrganizationTask<P> = (sql: postgres.Sql, organizationId: string, payload: P, helpers: JobHelpers) => Promise<unknown>;

export function taskList(d: TaskDependencies): TaskList {
  const { sql, connections, config, transport, mailer, metrics } = d;
  /** A job of one organization (app_private.queue_job puts it in every payload), run on its
   * organization's node: one whose organization is gone (its rows deleted before
   * app_private.queue_job named it) has nothing to do. */
  const byOrganization = <P>(task: OrganizationTask<P>): Task => async (payload, helpers) => {
    const org = (payload as { organization_id?: unknown } | null)?.organization_id;
    if (typeof org !== 'string') {
      helpers.logger.warn(`a ${helpers.job.task_identifier} job names no organization; nothing to do`);
      return;
    }
    await connections.run(org, (on) => task(on, org, payload as P, helpers));
  };
  /** A job that writes its organization's events. On Citus they are written in that organization's
   * worker and their NOTIFY stays there, where no fan-out listens: after each such job the fan-out of
   * this process is woken, as the API wakes it after its own writes. On one server the commit's
   * NOTIFY does it. The webhook jobs write no events (a delivery emits none): they are not woken after. */
  const writingEvents = <P>(task: OrganizationTask<P>): Task => {
    const job = byOrganization(task);
    return async (payload, helpers) => {
      try {
        await job(payload, helpers);
      } finally {
        if (d.onCitus() !== false) d.wakeFanout();
      }
    };
  };
  return {
    webhook_fanout: byOrganization<{ event_id: string }>((on, org, p) => fanout(on, config, transport, org, p.event_id, metrics)),
    webhook_deliver: byOrganization<{ delivery_id: string }>((on, org, p) => deliver(on, config, transport, org, p.delivery_id, metrics)),
    accounting_sync: writingEvents<{ invoice_id: string; action: 'export' | 'void' }>((on, org, p, helpers) =>
      accountingSync(on, org, p.invoice_id, p.action, attemptOf(helpers))),
    file_scan: writingEvents<{ file_id: string }>((on, org, p, helpers) => scanFile(on, config, org, p.file_id, attemptOf(helpers))),
    report_run: writingEvents<{ run_id: string }>((on, org, p) => runReport(on, config, org, p.run_id)),
    // A run's wake-ups go where its streams listen: the coordinator.
    agent_run: writingEvents<{ run_id: string }>((on, org, p, helpers) =>
      executeRun(on, config, org, p.run_id, attemptOf(helpers), sql)),
    ticket_reply_email: writingEvents<{ message_id: string }>((on, org, p, helpers) =>
      sendTicketReply(on, mailer, org, p.message_id, attemptOf(helpers))),
    // Periodic (crontab below).
    webhook_purge: async () => {
      await sql`select app_private.purge_webhook_history()`;
      await sql`select control.purge_expired_idempotency_keys()`;
    },
    // Access token records live an hour; the expired ones go every hour.
    token_purge: async () => { await sql`select control.purge_expired_access_tokens()`; },
    upload_purge: async () => { await sql`select control.purge_expired_uploads()`; },
    report_purge: async () => { await sql`select control.purge_expired_report_results()`; },
    run_purge: async () => { await sql`select control.purge_expired_runs(make_interval(secs => ${config.agents.runRetentionSeconds}))`; },
    conversation_expire: async () => { await sql`select control.expire_conversation_contexts(interval '30 days')`; },
    // On Citus: shard groups moved by hand get their copies of the api views and their shards'
    // grants; scheduled only there. That is DDL on the shards, which the helper makes as the
    // schema's owner (a definer that takes no argument).
    citus_prepare: async () => { await sql`select app_private.citus_prepare_if_needed()`; },
  };
}

/** The periodic jobs: 30-day retention of webhook history (daily), expired access-token records,
 * uploads never completed, report results and finished runs past their retention (hourly), working
 * contexts idle for 30 days (daily); on Citus, shard groups moved by hand made ready (every minute). */
export function crontab(onCitus: boolean): string {
  return '17 3 * * * webhook_purge ?max=3\n7 * * * * token_purge ?max=3\n37 * * * * upload_purge ?max=3\n'
    + '47 * * * * report_purge ?max=3\n27 * * * * run_purge ?max=3\n57 4 * * * conversation_expire ?max=3\n'
    + (onCitus ? '* * * * * citus_prepare ?max=1\n' : '');
}
