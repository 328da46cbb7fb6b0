# Two commands for a newcomer: `make start` and `make test`.
SHELL := /bin/bash
# Node 24 or newer (a supported LTS line): the machine's, or Node 26 fetched once into .cache/ (scripts/node.sh).
export PATH := $(shell bash scripts/node.sh):$(PATH)
NODE_MODULES_STAMP := node_modules/.package-lock.json

.PHONY: start test test-quick test-citus test-failover bench typecheck codegen migrate build lint-migrations schema schema-citus install client dbdoc dbdoc-citus

$(NODE_MODULES_STAMP): package.json package-lock.json $(wildcard patches/*.patch) scripts/postgres-cjs.mjs
	npm install --no-audit --no-fund
	@touch $(NODE_MODULES_STAMP)

install: $(NODE_MODULES_STAMP)

## Serve on $$PORT (default 3000) with a seeded demo organization.
start: install
	npx tsx scripts/start.ts

## The whole test suite: against $$DATABASE_URL when set, else an embedded PostgreSQL.
test: install
	npx tsx scripts/test.ts

## A quick subset (used for the embedded run in CI).
test-quick: install
	npx tsx scripts/test.ts test/http/auth.test.ts test/db/tenancy.test.ts

bench: install
	npx tsx bench/run.ts

typecheck: install
	npx tsc --noEmit

## Applies pending migrations to $$DATABASE_URL (the deploy step; README "Running in production").
migrate: install
	npx tsx scripts/db.ts migrate

## squawk on every migration after the baseline (make test runs it too; db/README.md has the rules).
lint-migrations: install
	npx tsx scripts/lint-migrations.ts

## Rewrites db/schema.sql (dbmate's dump of a freshly migrated database; DATABASE_URL: PostgreSQL 15).
schema: install
	npx tsx scripts/schema-file.ts

## Rewrites db/citus/schema-coordinator.sql and schema-worker.sql (what runs on a Citus cluster: a
## database migrated on a local cluster, dumped on its coordinator and first worker, less the shards).
schema-citus: install
	npx tsx scripts/schema-file.ts --citus

## Compiles src/ to dist/ (what production runs: node dist/main.js, node dist/worker/main.js).
build: install
	npm run build

## Regenerates src/db/schema.ts (Kysely types) from a freshly migrated database.
codegen: install
	npx tsx scripts/codegen.ts

## Regenerates docs/database.md (RLS, policies, grants, triggers, functions) from a freshly migrated database.
dbdoc: install
	npx tsx scripts/database-doc.ts

## Regenerates docs/database-citus.md (the same catalogue on a Citus coordinator, with each table's placement).
dbdoc-citus: install
	npx tsx scripts/database-doc.ts --citus

## Regenerates client/openapi.json and client/schema.d.ts (types for the client in client/) from the routes.
client: install
	npx tsx scripts/client.ts

## The tests against a local Citus cluster (a coordinator and two workers of Debian's PostgreSQL 15
## with Citus 13.2; scripts/citus/install.sh builds it with this project's patches). Without Citus: one line, no tests.
test-citus: install
	npx tsx scripts/test-citus.ts

## A worker and then the coordinator of a Citus formation with streaming standbys failing over under
## load (pg_auto_failover: Debian's postgresql-15-auto-failover and pg-auto-failover-cli). Its
## formation takes minutes to start, so neither `make test` nor `make test-citus` runs it. Without
## them: one line, no test.
test-failover: install
	SVC_TEST_FAILOVER=1 npx tsx scripts/test.ts test/citus/ha-failover.test.ts
