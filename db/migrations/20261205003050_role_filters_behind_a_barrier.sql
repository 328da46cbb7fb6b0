-- migrate:up

/** Two api views filter rows by Role in their own WHERE over tables without row policies (the
 * global definitions): reports (a definition's required Roles) and agents (published, for API
 * clients, required Roles). Without a security barrier the planner ran a cheaper condition of the
 * reader's first, on every definition: a function of the runtime role's, given a finance context,
 * was shown rpt_project_progress, a report finance may not see (measured;
 * test/db/view-barriers.test.ts). The API builds no such condition, but the database is the last
 * line of defence. Behind the barrier a reader's condition sees only the rows the view lets
 * through. The definition lists are short: nothing to lose in plans.
 *
 * api.files also filters by Role in its WHERE (project and task files for members and managers),
 * over app.files, whose policy lets finance and hr see those files: PostgreSQL ordered a reader's
 * function after the view's conditions there (measured, and checked by the same test), but by
 * cost, not by guarantee; a barrier would cost the list its index order (the organization's files
 * sorted for a page of 50). The rule is to move into the files policy (docs/decisions.md). Every
 * other api view filters rows by policy only, which always comes first.
 */
alter view api.agents set (security_barrier = true);
alter view api.reports set (security_barrier = true);

-- migrate:down
alter view api.agents reset (security_barrier);
alter view api.reports reset (security_barrier);
