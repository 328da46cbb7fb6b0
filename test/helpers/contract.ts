// The contract check: every response a test receives is validated against the OpenAPI document
// the server itself serves (JSON Schema 2020-12, ajv with formats). A status the operation does
// not document, a media type it does not declare, or a body that does not match its schema
// (problem codes included) fails the test that received it. A request body the server accepted
// must match the documented request schema too.
import ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';

// CommonJS packages seen from an ES module: the classes are on `default`.
const Ajv2020 = ajv2020.default;
const addFormats = ajvFormats.default;

type Doc = { paths: Record<string, Record<string, any>>; components: any };

/** JSON pointer escaping for a path segment. */
const seg = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Operator and documentation routes are not API operations; they are not in the document. */
// The file capability URLs are not operations either: createFileUpload and createFileDownload hand them out.
const OUTSIDE_THE_API = new Set(['/health', '/ready', '/metrics', '/docs', '/openapi.json', '/files/upload/{token}', '/files/download/{token}', '/reports/download/{token}']);

export interface Exchange {
  method: string;
  /** The route template hapi matched (e.g. /v1/projects/{project_id}), or undefined when none did. */
  routePath?: string;
  /** The request path, for errors raised before routing. */
  path: string;
  requestBody?: unknown;
  requestContentType?: string;
  status: number;
  contentType?: string;
  body: string;
}

export class ContractChecker {
  private readonly ajv: InstanceType<typeof Ajv2020>;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi');
  }

  private validator(pointer: string): ValidateFunction {
    const cached = this.validators.get(pointer);
    if (cached) return cached;
    const v = this.ajv.compile({ $ref: `openapi#${pointer}` });
    this.validators.set(pointer, v);
    return v;
  }

  private check(pointer: string, value: unknown, what: string): string[] {
    const v = this.validator(pointer);
    if (v(value)) return [];
    return (v.errors ?? []).slice(0, 8).map((e) => `${what}${e.instancePath || ''} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
  }

  /** Problems with one exchange, as readable sentences (empty when it conforms). */
  violations(x: Exchange): string[] {
    if (x.routePath && OUTSIDE_THE_API.has(x.routePath)) return [];
    if (x.routePath?.startsWith('/docs/')) return [];
    const mediaType = (x.contentType ?? '').split(';')[0]!.trim();
    const json = (): unknown => { try { return JSON.parse(x.body); } catch { return undefined; } };
    const op = x.routePath ? this.doc.paths[x.routePath]?.[x.method.toLowerCase()] : undefined;
    const where = `${x.method} ${x.routePath ?? '(no route)'} → ${x.status}`;
    if (!op) {
      // No documented operation (unknown route, other method, an explicit refusal left out of the
      // document): it must still be a problem document (or the token endpoint's OAuth error).
      if (x.status < 400) return [`${where}: a success from an undocumented operation`];
      // The token endpoint answers in the OAuth error format (RFC 6749 §5.2) whatever the method.
      if (x.path === '/oauth/token') return this.check('/components/schemas/OAuthError', json(), `${where}: body`);
      if (mediaType !== 'application/problem+json') return [`${where}: ${mediaType || 'no media type'} instead of application/problem+json`];
      return this.check('/components/schemas/Problem', json(), `${where}: body`);
    }
    const base = `/paths/${seg(x.routePath!)}/${x.method.toLowerCase()}`;
    const responses = op.responses as Record<string, any>;
    const key = String(x.status) in responses ? String(x.status) : `${String(x.status)[0]}XX` in responses ? `${String(x.status)[0]}XX` : undefined;
    if (!key) return [`${where}: status ${x.status} is not documented for ${op.operationId} (documented: ${Object.keys(responses).join(', ')})`];
    const out: string[] = [];
    const content = responses[key].content as Record<string, unknown> | undefined;
    if (x.body !== '' && x.status !== 204) {
      if (!content) out.push(`${where}: a body, but ${op.operationId} documents none for ${key}`);
      else if (!(mediaType in content)) out.push(`${where}: media type ${mediaType || 'none'} not documented (${Object.keys(content).join(', ')})`);
      else if (/json$/.test(mediaType)) {
        const body = json();
        const problem = body as { code?: string } | undefined;
        out.push(...this.check(`${base}/responses/${key}/content/${seg(mediaType)}/schema`, body,
          `${where}${problem?.code && x.status >= 400 ? ` (${problem.code})` : ''}: body`));
      }
    }
    if (x.status < 300 && op.requestBody && x.requestBody !== undefined && x.requestBody !== null) {
      const reqType = (x.requestContentType ?? 'application/json').split(';')[0]!.trim();
      const reqContent = op.requestBody.content as Record<string, unknown>;
      if (reqType in reqContent && /json$/.test(reqType)) {
        const body = typeof x.requestBody === 'string' ? (() => { try { return JSON.parse(x.requestBody as string); } catch { return x.requestBody; } })() : x.requestBody;
        out.push(...this.check(`${base}/requestBody/content/${seg(reqType)}/schema`, body, `${where}: accepted request body`));
      }
    }
    return out;
  }
}
