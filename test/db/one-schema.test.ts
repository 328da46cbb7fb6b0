// One schema for one server and for the cluster: db/schema.sql (what the migrations make on one
// server) and db/citus/schema-coordinator.sql (on a Citus coordinator; test/citus/schema-dumps.test.ts
// keeps it current) hold the same text for every object, but for the cluster's own objects below,
// each named with the reason it exists only there. A policy, function or view given a second text
// for the cluster fails here. Reads the two files only.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { CITUS_SCHEMA_FILES } from '../../scripts/schema-file.ts';

/** Each object of a pg_dump text by its `-- Name: …; Type: …; Schema: …` header, with its statements. */
function objects(text: string): Map<string, string> {
  const out = new Map<string, string>();
  // (pg_dump's \restrict and \unrestrict lines carry a random key of each dump.)
  for (const part of text.replace(/^\\(un)?restrict .*$/gm, '').split('\n--\n-- Name: ').slice(1)) {
    // The object's statements end where the next comment block begins (the last object's, where
    // dbmate's schema_migrations rows follow in db/schema.sql).
    const [head, body = ''] = part.split('\n--\n');
    out.set(head!.split('; Owner:')[0]!, body.trim());
  }
  return out;
}

/** What exists, or reads differently, on a cluster only: where it is made and why. */
const CLUSTER_ONLY: Record<string, string> = {
  // The extensions themselves (Citus, and dblink for the BI relay).
  'citus; Type: EXTENSION; Schema: -': 'the cluster',
  'EXTENSION citus; Type: COMMENT; Schema: -': 'the cluster',
  'dblink; Type: EXTENSION; Schema: -': 'the BI relay (db/citus/bootstrap.sql)',
  'EXTENSION dblink; Type: COMMENT; Schema: -': 'the BI relay',
  'svc_dblink; Type: SCHEMA; Schema: -': 'the BI relay',
  // What only a superuser may make on a cluster, and no role of the service may change.
  'prepare_workers(); Type: FUNCTION; Schema: svc_bootstrap': 'the cluster\'s bootstrap: what a worker keeps of its own',
  'add_node(text, integer); Type: PROCEDURE; Schema: svc_bootstrap': 'the cluster\'s bootstrap: a node added by a superuser',
  'relay_connect(integer); Type: FUNCTION; Schema: svc_bootstrap': 'the cluster\'s bootstrap: the BI relay\'s connection',
  'rebalance_start(text); Type: FUNCTION; Schema: svc_bootstrap': 'the cluster\'s bootstrap: the rebalancer, which moves rows as its starter',
  'remove_node(text, integer); Type: PROCEDURE; Schema: svc_bootstrap': 'the cluster\'s bootstrap: a node removed by a superuser',
  'reference_tables_trusted(); Type: FUNCTION; Schema: svc_bootstrap': 'the cluster\'s bootstrap: what Citus runs as a superuser when it copies a reference table',
  // A BI login reads its organization's rows on the workers through a relay with a proof per query.
  'reporting_private; Type: SCHEMA; Schema: -': 'the BI relay',
  'relay_keys; Type: TABLE; Schema: app_private': 'the BI relay',
  'TABLE relay_keys; Type: COMMENT; Schema: app_private': 'the BI relay',
  'relay_keys relay_keys_pkey; Type: CONSTRAINT; Schema: app_private': 'the BI relay',
  'bi_relay_proof(integer, bigint, text, text, text[]); Type: FUNCTION; Schema: app_private': 'the BI relay',
  'backend_started(); Type: FUNCTION; Schema: app_private': 'the BI relay',
  'reporting_rows_read(text); Type: FUNCTION; Schema: app_private': 'the BI relay',
  'bi_rows(text); Type: FUNCTION; Schema: reporting_private': 'the BI relay',
  'bi_rows_of(text, text, text[], text); Type: FUNCTION; Schema: reporting_private': 'the BI relay',
  'organizations The relay reads the organization a proof named; Type: POLICY; Schema: app': 'the BI relay',
  'FUNCTION reporting_rows_read(p_statement text); Type: COMMENT; Schema: app_private': 'the BI relay',
  'FUNCTION bi_rows(p_view text); Type: COMMENT; Schema: reporting_private': 'the BI relay',
  'FUNCTION bi_rows_of(p_view text, p_organization_id text, p_roles text[], p_proof text); Type: COMMENT; Schema: reporting_private': 'the BI relay',
  'POLICY "The relay reads the organization a proof named" ON organizations; Type: COMMENT; Schema: app': 'the BI relay',
  // The reporting views read the relay's rows on a cluster, the tables under policies on one server.
  ...Object.fromEntries(['approvals', 'invoices', 'members', 'payments', 'projects', 'tasks', 'tickets', 'time_entries'].flatMap((v) => [
    [`${v}; Type: VIEW; Schema: reporting`, 'the BI relay'],
    [`${v}; Type: VIEW; Schema: reporting_private`, 'the BI relay'],
  ])),
  // Citus checks no foreign key from a coordinator table to a distributed one.
  'bi_logins bi_logins_organization_id_fkey; Type: FK CONSTRAINT; Schema: app_private': 'one server only: BI logins stay on the coordinator',
};

t.test('the cluster runs the one server\'s texts, but for its own objects', async (t) => {
  const one = objects(readFileSync('db/schema.sql', 'utf8'));
  const cluster = objects(readFileSync(CITUS_SCHEMA_FILES.coordinator, 'utf8'));
  const differences: string[] = [];
  for (const name of new Set([...one.keys(), ...cluster.keys()])) {
    if (one.get(name) === cluster.get(name)) continue;
    differences.push(name);
  }
  const unexplained = differences.filter((d) => !(d in CLUSTER_ONLY));
  t.same(unexplained, [], 'every object has one text on both targets, or is the cluster\'s own');
  const policies = [...one.keys()].filter((k) => k.includes('; Type: POLICY;'));
  t.ok(policies.length > 100, `${policies.length} policies, each in one text`);
});
