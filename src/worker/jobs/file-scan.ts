// file_scan (one per completed upload): clamd scans the bytes; the file becomes ready or rejected.
import type postgres from 'postgres';
import type { Config } from '../../config.ts';
import { scan, ScannerUnavailable } from '../../files/clamd.ts';
import type { Attempt } from './attempt.ts';

/** Scans a processing file's bytes with clamd (streamed from the database in chunks) and records
 * the outcome; without a scanner the file is ready unscanned, unless a scan is required. A scanner
 * that does not answer is retried by the job; after the last attempt the file is rejected. */
export async function scanFile(sql: postgres.Sql, config: Config, organizationId: string, fileId: string,
  attempt: Attempt): Promise<string> {
  const [f] = await sql<{ status: string; organization_id: string; upload_id: string | null }[]>`
    select * from app_private.file_scan_load(${organizationId}, ${fileId})`;
  if (!f || f.status !== 'processing') return 'skipped';
  const record = async (outcome: string, detail: string | null) => {
    const [r] = await sql<{ state: string }[]>`
      select app_private.file_scan_record(${organizationId}, ${fileId}, ${outcome}, ${detail}, ${config.files.requireScan}) as state`;
    return r!.state;
  };
  if (!config.files.clamd) return record('not_scanned', null);
  const chunks = async function* () {
    for await (const rows of sql<{ data: Buffer }[]>`
      select data from app.file_chunks where organization_id = ${f.organization_id} and upload_id = ${f.upload_id} order by seq`.cursor(4)) {
      for (const r of rows) yield r.data;
    }
  };
  try {
    const result = await scan(config.files.clamd, chunks(), config.files.scanTimeoutMs);
    return record(result.clean ? 'clean' : 'infected', result.clean ? null : result.signature);
  } catch (e) {
    if (!(e instanceof ScannerUnavailable) || attempt.attempts < attempt.maxAttempts) throw e;
    return record('failed', e.message);
  }
}
