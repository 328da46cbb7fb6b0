// Where each table without organization_id goes on Citus (docs/scaling.md); the catalog tests check it.
/** Tables that are not tenant tables (all but one without organization_id), and what they become on Citus (docs/scaling.md). */
export const GLOBAL_TABLES: Record<string, 'root' | 'reference' | 'coordinator' | 'every node'> = {
  // The tenant root: distributed by its id, colocated with every tenant table (its triggers seed
  // the organization's own rows; foreign keys pair organization_id with it).
  'app.organizations': 'root',
  'app_private.currencies': 'reference',
  'app_private.event_types': 'reference',
  // The token signing keys: read and written where requests arrive (tokens are signed in the API).
  'app_private.signing_keys': 'coordinator',
  // The request-context signing key: each node's own table and key (a context is signed and
  // checked in the worker backend that runs a delegated call; Citus cannot read a reference table there).
  'app_private.context_keys': 'every node',
  // The report catalogue: the same definitions for every organization, read by every run.
  'app_private.report_definitions': 'reference',
  'app_private.agent_definitions': 'reference',
  'app_private.agent_skills': 'reference',
  'app_private.rate_limit_buckets': 'coordinator',
  // Which organization a client id belongs to: the token endpoint's first question, asked where
  // requests arrive (it has organization_id, but a lookup by client id must not ask every shard).
  'app_private.client_directory': 'coordinator',
  // A BI login's organization and Roles, looked up by the session's role name in every statement of a
  // BI session, which connects to the coordinator (its rows come from the worker through the relay).
  'app_private.bi_logins': 'coordinator',
  // The key of the run streams' wake-up names (one row), read wherever a run's event is appended.
  'app_private.run_wake_key': 'reference',
  // On Citus: the key of the BI relay's proofs (one row), made on the coordinator and checked on the
  // organization's worker.
  'app_private.relay_keys': 'reference',
};

