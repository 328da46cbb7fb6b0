// Where each table without organization_id goes on Citus (docs/scaling.md); the catalog tests check it.
/** Tables without organization_id, and what they become on Citus (docs/scaling.md). */
export const GLOBAL_TABLES: Record<string, 'root' | 'reference' | 'coordinator'> = {
  // The tenant root: distributed by its id, colocated with every tenant table (its triggers seed
  // the organization's own rows; foreign keys pair organization_id with it).
  'app.organizations': 'root',
  'app_private.currencies': 'reference',
  'app_private.event_types': 'reference',
  'app_private.signing_keys': 'reference',
  // The request-context signing key: policies are evaluated where the rows are.
  'app_private.context_keys': 'reference',
  // The report catalogue: the same definitions for every organization, read by every run.
  'app_private.report_definitions': 'reference',
  'app_private.agent_definitions': 'reference',
  'app_private.agent_skills': 'reference',
  'app_private.rate_limit_buckets': 'coordinator',
  // The key of the run streams' wake-up names (one row), read wherever a run's event is appended.
  'app_private.run_wake_key': 'reference',
};

