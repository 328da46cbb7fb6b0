// report_run (one per createReportRun): the report in one snapshot, as the requesting client.
import type postgres from 'postgres';
import type { Config } from '../../config.ts';

/** Runs a report: running (its own statement, so clients see it), then the results in one
 * REPEATABLE READ transaction under the requesting client's context (app_private.report_run_execute). */
export async function runReport(sql: postgres.Sql, config: Config, organizationId: string, runId: string): Promise<string> {
  await sql`select app_private.report_run_start(${organizationId}, ${runId})`;
  const [r] = await sql.begin('isolation level repeatable read', (tx) =>
    tx<{ outcome: string }[]>`select app_private.report_run_execute(${organizationId}, ${runId},
      make_interval(secs => ${config.reportRetentionSeconds})) as outcome`);
  return r!.outcome;
}
