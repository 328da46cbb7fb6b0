// The tickets benchmark, run by bench/run.ts on the same server and database: 100,000
// tickets in the benchmarked client's organization, each with one reply, seeded as the owner in a
// few statements (triggers off for the seed: numbers, search documents and the counter are written
// by the same statements); then listTickets with a full-text `search` matching 1 % of them, its
// first page and a deep page (page 10, through the cursors), each next to pgbench replaying its own
// SQL (bench/ratio.ts), and the same list without search.
import postgres from 'postgres';
import { logger, type BenchOptions, type BenchResult } from './common.ts';
import { runRatioBench } from './ratio.ts';

const log = logger('tickets');
const TICKETS = Number(process.env.BENCH_TICKETS ?? 100_000);
const WORDS = ['printer', 'login', 'invoice', 'password', 'network', 'laptop', 'email', 'calendar', 'report', 'export',
  'import', 'timeout', 'crash', 'slow', 'access', 'license', 'backup', 'restore', 'sync', 'upload'];

export async function runTicketBench(o: BenchOptions): Promise<BenchResult> {
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  let org: string;
  try {
    const [row] = await sql<{ org: string }[]>`select organization_id as org from app.api_clients where id = ${o.clientId}`;
    org = row!.org;
    log(`seeding ${TICKETS} tickets with one reply each`);
    const t0 = Date.now();
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      // Every 100th ticket mentions kerberos (1 % of them): the search term.
      await tx`insert into app.tickets (organization_id, id, number, subject, description, status, priority, requester_name, requester_email,
                                        tags, created_by_client_id, created_at, updated_at)
        select ${org}, 'tkt_bench' || lpad(g::text, 7, '0'), 'TKT-' || lpad(g::text, 6, '0'),
               initcap((${WORDS}::text[])[1 + g % 20]) || ' problem ' || g || case when g % 100 = 7 then ' after the kerberos change' else '' end,
               'The ' || (${WORDS}::text[])[1 + (g / 20) % 20] || ' does not work since ' || (${WORDS}::text[])[1 + (g / 400) % 20] || '.',
               (array['new', 'open', 'pending', 'on_hold'])[1 + g % 4], (array['low', 'normal', 'high', 'urgent'])[1 + g % 4],
               'Requester ' || g, 'requester' || (g % 5000) || '@customer.example', array[(${WORDS}::text[])[1 + g % 20]],
               ${o.clientId}, now() - make_interval(secs => ${TICKETS} - g), now() - make_interval(secs => ${TICKETS} - g)
          from generate_series(1, ${TICKETS}::int) g`;
      await tx`insert into app.ticket_messages (organization_id, id, ticket_id, type, body, author_client_id, delivery_status, delivered_at, created_at)
        select ${org}, 'tmsg_bench' || lpad(g::text, 7, '0'), 'tkt_bench' || lpad(g::text, 7, '0'), 'reply',
               'Thanks, we are looking at the ' || (${WORDS}::text[])[1 + (g / 7) % 20] || ' issue.', ${o.clientId}, 'sent', now(), now()
          from generate_series(1, ${TICKETS}::int) g`;
      await tx`insert into app.ticket_search (organization_id, ticket_id, public_doc)
        select t.organization_id, t.id, setweight(to_tsvector('simple', t.subject), 'A') || to_tsvector('simple', coalesce(t.description, ''))
               || to_tsvector('simple', m.body)
          from app.tickets t join app.ticket_messages m on m.organization_id = t.organization_id and m.ticket_id = t.id
         where t.organization_id = ${org} and t.id like 'tkt_bench%'`;
      await tx`insert into app_private.ticket_number_counters (organization_id, last_number) values (${org}, ${TICKETS})
        on conflict (organization_id) do update set last_number = excluded.last_number`;
    });
    await sql`analyze app.tickets`;
    await sql`analyze app.ticket_messages`;
    await sql`analyze app.ticket_search`;
    log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await sql.end();
  }

  // The deep page's cursor: nine pages through the search.
  const auth = { authorization: `Bearer ${o.token}` };
  const first = '/v1/tickets?search=kerberos&limit=50';
  let after = '';
  for (let page = 1; page < 10; page++) {
    const res = await fetch(`${o.base}${first}${after}`, { headers: auth });
    const body = await res.json() as { data: unknown[]; next_cursor: string | null };
    if (!res.ok || !body.next_cursor) throw new Error(`listTickets page ${page}: ${res.status}`);
    after = `&after=${encodeURIComponent(body.next_cursor)}`;
  }
  const ratio = await runRatioBench(o, [
    { name: 'GET /v1/tickets?search=kerberos&limit=50 (first page of 1,000 matches)', method: 'GET', path: first, status: 200 },
    { name: 'GET /v1/tickets?search=kerberos&limit=50, page 10', method: 'GET', path: `${first}${after}`, status: 200 },
    { name: 'GET /v1/tickets?limit=50 (no search)', method: 'GET', path: '/v1/tickets?limit=50', status: 200 },
  ]);
  return {
    failed: ratio.failed,
    markdown: `### Tickets (issue 15): ${TICKETS.toLocaleString('en')} tickets with a reply each, full-text search\n\n${ratio.markdown}`,
  };
}
