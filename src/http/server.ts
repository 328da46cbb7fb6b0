// Builds the hapi server: shared extensions (request id, problem+json for every error, logs)
// and the routes of every area.
import Hapi, { type Request, type ResponseToolkit } from '@hapi/hapi';
import type { Boom } from '@hapi/boom';
import type { AppContext } from './context.ts';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, PROBLEMS, databaseUnavailable, isDatabaseUnavailable, problemBody, problemResponse, type ProblemCode } from './errors.ts';
import type { Operation } from './operation.ts';
import { toRoute, requestIdOf, newRequestId } from './operation/route.ts';
import { header } from './headers.ts';
import { buildOpenApi } from './openapi.ts';
import { docsRoutes } from './docs-page.ts';
import { operatorRoutes } from './operator-routes.ts';
import { tokenRoute } from '../routes/oauth.ts';
import { identityOperations } from '../routes/identity.ts';
import { memberOperations } from '../routes/members.ts';
import { projectOperations } from '../routes/projects.ts';
import { taskOperations } from '../routes/tasks.ts';
import { objectSchemaOperations } from '../routes/object-schemas.ts';
import { timeEntryOperations } from '../routes/time-entries.ts';
import { approvalOperations, approvalDecisionRefusals } from '../routes/approvals.ts';
import { webhookOperations } from '../routes/webhooks.ts';
import { invoiceOperations } from '../routes/invoices.ts';
import { integrationOperations } from '../routes/integrations.ts';
import { ticketOperations } from '../routes/tickets.ts';
import { reportOperations, reportDownloadRoutes } from '../routes/reports.ts';
import { agentOperations } from '../routes/agents.ts';
import { conversationOperations } from '../routes/conversations.ts';
import { fileOperations, fileTransferRoutes, UPLOAD_PATH, DOWNLOAD_PATH } from '../routes/files.ts';

/** The route template of a capability URL (whatever the method), whose path is its secret. */
const capabilityTemplate = (path: string) =>
  path.startsWith('/files/upload/') ? UPLOAD_PATH : path.startsWith('/files/download/') ? DOWNLOAD_PATH
    : path.startsWith('/reports/download/') ? '/reports/download/{token}' : undefined;

export const operations: Operation[] = [
  ...identityOperations, ...memberOperations, ...projectOperations, ...taskOperations, ...objectSchemaOperations,
  ...timeEntryOperations, ...approvalOperations, ...approvalDecisionRefusals, ...webhookOperations,
  ...invoiceOperations, ...integrationOperations, ...fileOperations, ...ticketOperations, ...reportOperations,
  ...agentOperations, ...conversationOperations,
];

const BOOM_CODES: Record<number, ProblemCode> = {
  400: 'INVALID_JSON', 404: 'ROUTE_NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 406: 'NOT_ACCEPTABLE',
  413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE',
};
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What Node refuses before hapi sees a request (a request line and headers past its 16 KiB, bytes
 * that are not HTTP) is answered as a problem too, not with hapi's bare `400 Bad Request`. */
function answerClientErrorsAsProblems(listener: Server) {
  listener.removeAllListeners('clientError');
  listener.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: unknown }) => {
    // As Node's own handler: nothing is written over a response already under way on the socket.
    if (!socket.writable || socket._httpMessage || err.code === 'ECONNRESET') { socket.destroy(); return; }
    const code: ProblemCode = err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'INVALID_REQUEST';
    const body = JSON.stringify(problemBody(code, code === 'HEADERS_TOO_LARGE' ? 'the request line and headers exceed 16 KiB'
      : code === 'REQUEST_TIMEOUT' ? 'the request was not received in time' : 'the request is not valid HTTP/1.1', newRequestId()));
    socket.end(`HTTP/1.1 ${PROBLEMS[code].status} ${PROBLEMS[code].title}\r\nContent-Type: application/problem+json\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

export async function createServer(app: AppContext, extra: Operation[] = []) {
  const server = Hapi.server({
    port: app.config.port,
    host: app.config.host,
    routes: { response: { emptyStatusCode: 204 } },
    router: { stripTrailingSlash: false },
    load: { sampleInterval: 0 },
  });
  answerClientErrorsAsProblems(server.listener);
  // Node's 5 s default closes an idle connection while a client may be starting its next request on
  // it: the request is lost (EPIPE or ECONNRESET on the client, nothing logged here), and a POST
  // cannot safely be sent again. A client under load (a busy event loop, a proxy's pool) reuses a
  // connection later than it meant to. With the server's timeout past the usual client and proxy
  // idle timeouts (undici 4 s, AWS ALB 60 s), the client closes first. Idle connections still
  // close at once on stop (Node closes idle connections in server.close()).
  server.listener.keepAliveTimeout = app.config.httpKeepAliveTimeoutMs;
  const ops = [...operations, ...extra];
  server.ext('onPostStop', () => app.close());
  // Open event streams end first: the stop waits for every open connection.
  server.ext('onPreStop', () => app.runEvents.close());

  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    const requestId = requestIdOf(request);
    let response = request.response as any;
    if (response.isBoom) {
      const boom = response as Boom;
      const status = boom.output.statusCode;
      let err: ApiError;
      if (status === 404) {
        const allowed = METHODS.filter((m) => request.server.match(m as 'GET', request.path));
        err = allowed.length
          ? new ApiError('METHOD_NOT_ALLOWED', `${request.method.toUpperCase()} is not allowed here`, { headers: { Allow: allowed.join(', ') } })
          : new ApiError('ROUTE_NOT_FOUND', `no endpoint at ${capabilityTemplate(request.path) ?? request.path}`);
      } else if (status === 400) {
        err = /payload|json/i.test(boom.message)
          ? new ApiError('INVALID_JSON', 'the request body is not valid JSON')
          : new ApiError('INVALID_REQUEST', 'the request is malformed (for example a bad percent-encoding in the path)');
      } else if (BOOM_CODES[status]) {
        err = new ApiError(BOOM_CODES[status]!, boom.output.payload.message);
      } else if (isDatabaseUnavailable(boom)) {
        // A database outage reaching here (outside an operation's own mapping) is still not a bug.
        err = databaseUnavailable(boom);
        app.reportUnavailable(boom, request.route?.path ?? request.path);
      } else {
        if (status >= 500) app.logger.error({ request_id: requestId, err: boom }, 'request failed');
        err = new ApiError('INTERNAL_ERROR', 'an unexpected error occurred; quote request_id when reporting it');
      }
      if (request.path === '/oauth/token' && status < 500) {
        // Errors hapi raises before the token handler runs still use the OAuth format.
        const methodNotAllowed = err.code === 'METHOD_NOT_ALLOWED';
        response = h.response({
          error: 'invalid_request',
          error_description: methodNotAllowed ? 'use POST' : status === 415 || status === 400
            ? 'send grant_type and scope as an application/x-www-form-urlencoded body' : err.detail,
          code: 'INVALID_REQUEST',
        }).code(methodNotAllowed ? 405 : 400).type('application/json')
          .header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        if (methodNotAllowed) response.header('Allow', 'POST');
      } else {
        // A capability URL's path is its secret: problems name the route template instead.
        response = problemResponse(h, err, requestId, capabilityTemplate(request.path) ?? request.path);
      }
    }
    response.header('X-Request-Id', requestId);
    const clientRequestId = header(request, 'x-client-request-id');
    if (clientRequestId && clientRequestId.length <= 200) response.header('X-Client-Request-Id', clientRequestId);
    return response;
  });

  // Logs through pino, without a child logger per request (creating one with redaction cost every
  // request a few microseconds, logged or not): one line per completed request, naming the route
  // template (never the path, which can hold a capability URL, or the query string), and 5xx
  // errors with their request id (onPreResponse above).
  const logRequests = app.logger.isLevelEnabled('info');
  // One labelled child per (method, route, status), kept: prom-client hashes a labels object on every call.
  const series = new Map<string, { requests: { inc(): void }; duration: { observe(v: number): void } }>();
  server.events.on('response', (request: Request) => {
    const res = request.response as { statusCode?: number } | null;
    const status = res?.statusCode ?? 0;
    const route = request.route.path;
    const ms = Date.now() - request.info.received;
    const method = request.method.toUpperCase();
    const key = `${method} ${route} ${status}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method, route, status: String(status) };
      s = { requests: app.metrics.httpRequests.labels(labels), duration: app.metrics.httpDuration.labels(labels) };
      series.set(key, s);
    }
    s.requests.inc();
    s.duration.observe(ms / 1000);
    if (!logRequests || route === '/health' || route === '/metrics') return;
    app.logger.info({ request_id: requestIdOf(request), method, route, status, ms,
      client_request_id: header(request, 'x-client-request-id')?.slice(0, 200) }, 'request');
  });

  server.route(operatorRoutes(app));
  server.route(tokenRoute(app));
  server.route(fileTransferRoutes(app));
  server.route(reportDownloadRoutes(app));
  for (const op of ops) server.route(toRoute(op, app));

  const openapi = buildOpenApi(ops);
  server.route({ method: 'GET', path: '/openapi.json', options: { handler: () => openapi } });
  server.route(docsRoutes(openapi));
  return server;
}
