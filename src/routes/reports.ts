import Joi from 'joi';
import { sql } from 'kysely';
import { contentDisposition } from '../http/content-disposition.ts';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { Readable } from 'node:stream';
import { schemaErrors } from '../http/json-schema.ts';
import type { Operation } from '../http/operation.ts';
import { requestIdOf } from '../http/operation/route.ts';
import type { AppContext } from '../http/context.ts';
import { ApiError, fromDatabaseError, problemResponse } from '../http/errors.ts';
import { schemas } from './schemas.ts';
import { freeJson, getStatement, listStatement } from './common.ts';
import { listQuery } from '../http/pagination.ts';
import { linkForDatabase, withLink } from '../db/links.ts';
import { api, type Declared } from '../db/api.ts';

const reportId = Joi.string().pattern(/^rpt_[a-z_]{1,64}$/);
const runParams = Joi.object({ report_id: reportId.required(), run_id: Joi.string().pattern(/^rrun_[A-Za-z0-9]{1,64}$/).required() });
export const REPORT_DOWNLOAD_PATH = '/reports/download/{token}';
/** Rows read per statement when a download streams out. */
const DOWNLOAD_BATCH = 5000;

function checkParameters(definition: { id: string; version: number; parameters_schema: object }, parameters: unknown) {
  // Parameters are checked against each definition's JSON Schema (ajv, with formats such as date).
  const errors = schemaErrors(`report:${definition.id}@${definition.version}`, definition.parameters_schema, parameters,
    '/parameters', 'INVALID_REPORT_PARAMETERS');
  if (errors.length === 0) return;
  throw new ApiError('INVALID_REPORT_PARAMETERS', errors.length === 1 ? errors[0]!.detail : `${errors.length} problems; see errors`, { errors });
}

const baseUrl = (app: AppContext, request: Request) =>
  app.config.files.publicUrl ?? `${request.server.info.protocol}://${request.info.host}`;

export const reportOperations: Operation[] = [
  {
    kind: 'statement',
    operationId: 'listReports', method: 'GET', path: '/v1/reports', tag: 'Reports',
    summary: 'The report definitions the caller can use (those whose required_roles it holds)',
    query: Joi.object({ ...listQuery }),
    response: { status: 200, description: 'A page of report definitions', schema: schemas.list(schemas.reportDefinition) },
    statement: (ctx) => listStatement(ctx, 'api.reports', { expr: (eb) => eb.ref('sort_id'), type: 'text' }, 'asc', () => []),
  },
  {
    kind: 'statement',
    operationId: 'getReport', method: 'GET', path: '/v1/reports/{report_id}', tag: 'Reports',
    summary: 'One report definition', params: Joi.object({ report_id: reportId.required() }),
    errors: ['REPORT_NOT_FOUND', 'REPORT_ROLE_REQUIRED'],
    response: { status: 200, description: 'The report definition', schema: schemas.reportDefinition },
    statement: ({ params }) => getStatement(api.rows('report_get', params.report_id),
      () => new ApiError('REPORT_NOT_FOUND', `no report ${params.report_id}`)),
  },
  {
    kind: 'handler',
    operationId: 'createReportRun', method: 'POST', path: '/v1/reports/{report_id}/runs', tag: 'Reports', idempotencyKey: true,
    summary: 'Run a report: 202 with the run (queued); the worker computes it in one snapshot, as the caller, and report_run.succeeded or report_run.failed follows',
    params: Joi.object({ report_id: reportId.required() }),
    body: Joi.object({
      parameters: freeJson(Joi.object().unknown(true).description('an object valid against the definition\'s parameters_schema'), { bytes: 65_536, depth: 8 }).default({}),
      format: Joi.string().max(20).default('json').description('one of the definition\'s formats: json or csv'),
    }),
    errors: ['REPORT_NOT_FOUND', 'REPORT_ROLE_REQUIRED', 'INVALID_REPORT_PARAMETERS', 'EXPORT_FORMAT_NOT_SUPPORTED'],
    response: { status: 202, description: 'The run, queued', schema: schemas.reportRun },
    handler: async (ctx) => {
      const { rows: [d] } = await api.rows('report_get', ctx.params.report_id).execute(ctx.tx);
      checkParameters(d!.doc as { id: string; version: number; parameters_schema: object }, ctx.body.parameters);
      const { rows: [r] } = await api.value('report_run_create', ctx.params.report_id, ctx.body.parameters, ctx.body.format).execute(ctx.tx);
      const doc = r!.value as { id: string };
      return { status: 202, body: doc, headers: { Location: `/v1/reports/${ctx.params.report_id}/runs/${doc.id}` } };
    },
  },
  {
    kind: 'statement',
    operationId: 'getReportRun', method: 'GET', path: '/v1/reports/{report_id}/runs/{run_id}', tag: 'Reports', params: runParams,
    summary: 'One run of the caller\'s (runs are visible to the client that created them only)',
    errors: ['REPORT_NOT_FOUND', 'REPORT_ROLE_REQUIRED', 'REPORT_RUN_NOT_FOUND'],
    response: { status: 200, description: 'The run', schema: schemas.reportRun },
    statement: ({ params }) => getStatement(api.rows('report_run_get', params.report_id, params.run_id),
      () => new ApiError('REPORT_RUN_NOT_FOUND', `no run ${params.run_id}`)),
  },
  {
    kind: 'statement',
    operationId: 'getReportResults', method: 'GET', path: '/v1/reports/{report_id}/runs/{run_id}/results', tag: 'Reports', params: runParams,
    summary: 'The rows of a succeeded run, in order, cursor-paginated (each row an object keyed by the definition\'s columns)',
    query: Joi.object({ ...listQuery }),
    errors: ['REPORT_NOT_FOUND', 'REPORT_ROLE_REQUIRED', 'REPORT_RUN_NOT_FOUND', 'REPORT_RUN_EXPIRED', 'REPORT_FAILED', 'CONFLICT'],
    response: { status: 200, description: 'A page of rows', schema: schemas.list(Joi.object().unknown(true).label('ReportRow')) },
    statement: (ctx) => listStatement(ctx, 'api.report_results', { expr: (eb) => eb.ref('n'), type: 'integer', dense: true }, 'asc',
      (eb) => [eb('run_id', '=', ctx.params.run_id)], [api.call('report_results_ready', ctx.params.report_id, ctx.params.run_id)]),
  },
  {
    kind: 'handler',
    operationId: 'createReportDownload', method: 'POST', path: '/v1/reports/{report_id}/runs/{run_id}/download', tag: 'Reports',
    params: runParams,
    summary: 'A short-lived download URL for a succeeded run\'s results in its format (CSV per RFC 4180 with a header row, or a JSON array); a bearer capability, not to be logged or shared',
    errors: ['REPORT_NOT_FOUND', 'REPORT_ROLE_REQUIRED', 'REPORT_RUN_NOT_FOUND', 'REPORT_RUN_EXPIRED', 'REPORT_FAILED'],
    response: { status: 201, description: 'The download URL', schema: schemas.reportDownload },
    handler: async (ctx) => {
      const { rows: [r] } = await api.value('report_download_create', ctx.params.report_id, ctx.params.run_id,
        ctx.app.config.files.downloadSeconds).execute(ctx.tx);
      const { download_token: token, ...rest } = r!.value as Record<string, any>;
      return { status: 201, body: { ...rest, download_url: `${baseUrl(ctx.app, ctx.request)}/reports/download/${token}` } };
    },
  },
];

/** A cell a spreadsheet would evaluate as a formula (OWASP "CSV Injection": it starts with =, +,
 * -, @, a tab or a carriage return) gets a leading single quote, which spreadsheets take as "text"
 * and do not show; a decimal number in a column the report declares numeric stays as it is. JSON
 * numbers are written as numbers and never pass here. */
const FORMULA_START = /^[=+\-@\t\r]/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
export function csvText(value: string, numericColumn: boolean): string {
  if (numericColumn && DECIMAL.test(value)) return value;
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** One CSV field (RFC 4180): null or absent empty; a number or boolean as JSON writes it; a string
 * neutralized (csvText); an object or array as its JSON. Quoted, its quotes doubled, when it holds
 * a quote, a comma, a CR or an LF (a lone one too, which parsers may take for a line break). The
 * tests hold it equal to csv-stringify's output for every kind of value (csv.test.ts); written here
 * because csv-stringify's per-record work, 2-4 µs a row, took 40 % of a download's time. */
const NEEDS_QUOTES = /[",\r\n]/;
export function csvField(value: unknown, numericColumn: boolean): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? csvText(value, numericColumn) : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A CSV record: its fields, commas between, CRLF at the end. */
export function csvLine(values: unknown[], numeric: boolean[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i ? ',' : '') + csvField(values[i], numeric[i]!);
  return line + '\r\n';
}

const problem = (request: Request, h: ResponseToolkit, err: ApiError) => problemResponse(h, err, requestIdOf(request), undefined);

/** The report download capability: rows streamed out in batches, each batch re-checking the token. */
export function reportDownloadRoutes(app: AppContext): ServerRoute[] {
  return [{
    method: 'GET', path: REPORT_DOWNLOAD_PATH,
    options: {
      response: { ranges: false },
      handler: (request, h) => withLink(app.database, request.params.token as string, async (link) => {
        const token = request.params.token as string;
        type Begun = { outcome: string; run_id: string; report_id: string; format: 'json' | 'csv'; row_count: number; columns: string[];
          numeric_columns: string[] };
        let b: Begun | undefined;
        try {
          b = (await api.rows('report_download_begin', linkForDatabase(token)).execute(link.db)).rows[0] as Begun | undefined;
        } catch (e) {
          const err = fromDatabaseError(e);
          if (err) return problem(request, h, err);
          throw e;
        }
        if (b!.outcome === 'expired') return problem(request, h, new ApiError('DOWNLOAD_URL_EXPIRED', 'this download URL has expired; ask for a new one (createReportDownload)'));
        if (b!.outcome === 'client_inactive') return problem(request, h, new ApiError('FORBIDDEN', 'the API Client this URL was made for can no longer use it'));
        if (b!.outcome !== 'ok') return problem(request, h, new ApiError('RESOURCE_NOT_FOUND', 'no report download at this URL'));
        const { run_id: runId, row_count: total, columns, numeric_columns: numeric, format } = b!;
        // Each batch comes as one JSON array text, parsed at once (rows handed over one by one cost
        // postgres.js 4-6 µs each), and the next batch is read while this one is written out.
        const read = async (from: number) => {
          const { rows: [r] } = await downloadBatch(linkForDatabase(token), runId!, from, from + DOWNLOAD_BATCH - 1).execute(link.db);
          if (r!.n !== Math.min(DOWNLOAD_BATCH, total - from + 1)) throw new Error('the results are no longer available');
          return JSON.parse(`[${r!.text ?? ''}]`) as Record<string, unknown>[];
        };
        async function* batches() {
          let next = total >= 1 ? read(1) : undefined;
          for (let from = 1; next; from += DOWNLOAD_BATCH) {
            const current = next;
            next = from + DOWNLOAD_BATCH <= total ? read(from + DOWNLOAD_BATCH) : undefined;
            next?.catch(() => {}); // awaited on the next turn; a client gone by then leaves it unread
            yield await current;
          }
        }
        (request.info as { acceptEncoding: string | null }).acceptEncoding = 'identity';
        let text: AsyncGenerator<string>;
        if (format === 'csv') {
          const decimal = columns.map((c) => numeric.includes(c));
          text = (async function* () {
            yield csvLine(columns, columns.map(() => false));
            for await (const rows of batches()) {
              let out = '';
              for (const r of rows) out += csvLine(columns.map((c) => r[c]), decimal);
              yield out;
            }
          })();
        } else {
          text = (async function* () {
            let first = true;
            yield '[';
            for await (const rows of batches()) {
              if (rows.length === 0) continue;
              yield (first ? '' : ',') + JSON.stringify(rows).slice(1, -1);
              first = false;
            }
            yield ']';
          })();
        }
        const body = Readable.from(text, { objectMode: false });
        const res = h.response(body).code(200)
          .type(format === 'csv' ? 'text/csv' : 'application/json')
          .header('Content-Disposition', contentDisposition(`${b!.report_id}-${runId}.${format}`))
          .header('X-Content-Type-Options', 'nosniff')
          .header('Cache-Control', 'private, no-store')
          .header('Referrer-Policy', 'no-referrer');
        if (format === 'csv') res.header('Content-Type', 'text/csv; charset=utf-8; header=present');
        return res;
      }, async () => problem(request, h, new ApiError('RESOURCE_NOT_FOUND', 'no report download at this URL'))),
    },
  }];
}

/** A batch of a download's rows as one JSON array's text (without its brackets) and their count.
 * report_rows reads in the context report_download_begin opens, so it takes b.run_id (a column,
 * not a parameter), which keeps it lateral to b. */
export const BATCH_COLUMNS = { text: 'text', n: 'int4' } as const;
export const downloadBatch = (link: string, runId: string, from: number, to: number) => sql<Declared<typeof BATCH_COLUMNS>>`
  select string_agg(x.data::text, ',' order by x.n) as text, count(*)::integer as n
    from ${api.table('report_download_begin', link)} b, lateral ${api.table('report_rows', sql<string>`b.run_id`, from, to)} x
   where b.outcome = 'ok' and b.run_id = ${runId}`;
