-- migrate:up

/** The reasons, where a DBA reads them (`\d+`, `\df+`, `obj_description`): every row policy, every
 * trigger function and every security-definer function says the rule it enforces and why, and the
 * explanations the squashed migrations carried come back where they still hold. test/db/reasons.test.ts
 * fails on one without. Comments only: no lock beyond a moment's on each object. */
set local lock_timeout = '3s';
set local statement_timeout = '60s';

comment on function api.access_token_record(text,text,text,bytea,timestamp with time zone) is 'The token endpoint''s record of an access token it signed: it checks the client id and secret again through api.authenticate_client and, only when the outcome is ok and the expiry is at most a day away, stores the token''s SHA-256 with its client, secret and expiry in app_private.access_tokens, so only the holder of a live secret can make a token that api.begin_request accepts. It runs as svc_gate because svc_runtime may neither read client secrets nor write token records; the insert passes svc_gate''s policy only for the organization the secret check returned (svc.gate_organization, set for the insert alone).';

comment on function api.authenticate_client(text,text,text) is 'The token endpoint''s client check: it matches the SHA-256 of the presented secret against the unrevoked secrets of that client in the named organization and answers, in the spec''s order, invalid_client (no match, or a deleted client), client_disabled, org_subscription_inactive, license_inactive (licence not active, or a Trial or Team plan) or ok with the secret and organization. It runs as svc_gate because svc_runtime may not read client secrets and learns only the outcome; svc.gate_organization is set to the named organization for the length of the read, so svc_gate''s policies show no other organization''s clients, secrets or standing, even to a wrong WHERE.';

comment on function api.idempotency_claim(text,text,text,text) is 'Claims an Idempotency-Key for the calling client (organization, client, method, route template, key) in the transaction of the write it guards, so the effect and the stored response commit or roll back together: a key held by a concurrent request answers in_flight (a transaction-scoped advisory lock), a live key with another request fingerprint mismatch, one with the same fingerprint replay with its stored response, and otherwise the key is claimed for 24 hours and svc.claimed is set, the one mark under which the command sent in the same round trip runs. Without a signed request context it raises SV500 CONTEXT_MISSING. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys, and the policy "Clients use only their own idempotency keys" keeps every read and write to the request''s organization and client.';

comment on function api.idempotency_complete(text,text,text,integer,jsonb,text) is 'Stores the response (status, headers, body) on the Idempotency-Key the calling client claimed, in the same transaction as the command, so a retry with that key replays exactly what was sent. It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; the update names the signed context''s organization and client, and the policy "Clients use only their own idempotency keys" admits no other key.';

comment on function api.idempotency_stored(text,text,text) is 'The preflight of slow writes: whether the calling client already holds a live (unexpired) Idempotency-Key for this method, route and key, in which case the request goes straight to its replay and nothing is sent anywhere (a claim commits only together with its stored response). It runs as svc_api because svc_runtime holds no privilege on app.idempotency_keys; it reads only the signed context''s organization and client, under the policy "Clients use only their own idempotency keys".';

comment on function api.rate_limit_lease(text,bigint,integer,integer) is 'Leases admissions from a rate-limit key''s fixed window, shared by every API instance in app_private.rate_limit_buckets: under the bucket''s row lock it grants what the caller''s waiting requests need or an eighth of what is left (at most 100), never more than the limit leaves, so the shared count never exceeds the limit; a newer window starts again from zero. It runs as svc_gate, the only role granted the buckets (svc_runtime may not touch them directly), which hold counters under the server''s keys and no tenant rows, hence no row security.';

comment on function api.rate_limit_release(text[],bigint[],integer[]) is 'Gives back admissions an instance leased with api.rate_limit_lease and did not spend, only while the bucket is still in the same window and never below zero, so an idle instance does not keep capacity the others need. It runs as svc_gate, the only role granted app_private.rate_limit_buckets (svc_runtime may not touch them directly), which hold counters and no tenant rows.';

comment on function api.signing_key_bootstrap(text,text,jsonb,text) is 'First boot: under a transaction-scoped advisory lock it stores the caller''s token signing key (the private JWK sealed by the server with SVC_SECRET_KEY, which the database never sees) only if no unretired key exists, so the first instance to arrive stores its key and every other reads it. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; the keys are the service''s, not an organization''s.';

comment on function api.signing_keys_current() is 'The unretired token signing keys, newest first, with their public JWKs and sealed private JWKs: shared by every API instance and kept across restarts. It runs as svc_gate because svc_runtime has no privilege on app_private.signing_keys; a private key leaves only sealed (SVC_SECRET_KEY, outside the database), and the keys are the service''s, not an organization''s.';

comment on policy "Clients see only themselves" on app.api_clients is 'svc_api (the api views and commands) reads only the calling client''s own row of app.api_clients, in the request''s organization, and only under a signed request context (app.current_client_id(), app.current_organization_id()). A client reads its own principal but never sees the other clients of its organization, which only administrators manage (spec).';

comment on policy "Clients use only their own idempotency keys" on app.idempotency_keys is 'svc_api reads and writes (every command) only the Idempotency-Keys whose organization and client are those of the signed request context, in USING and WITH CHECK. Keys are scoped per client, so no client can replay, detect or overwrite another client''s stored response, even within its own organization.';

comment on policy "Commands act in the request's organization" on app.api_clients is 'For svc_owner, svc_worker and svc_admin, every command: the clients of the signed request''s organization (app.current_organization_id()), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The triggers and definers svc_owner owns thus reach only the request''s organization''s clients, while the control plane, which creates, licenses and disables clients for any organization, reaches them all.';

comment on policy "Commands act in the request's organization" on app.idempotency_keys is 'For svc_owner, svc_worker and svc_admin, every command: the Idempotency-Keys of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The worker''s purge of expired keys (control.purge_expired_idempotency_keys) spans organizations, while a definer run inside a request stays in its own.';

comment on policy "The control plane keeps the client directory" on app_private.client_directory is 'svc_admin (svc-admin''s control plane) reads and writes every row of the client directory (client id to organization, for every tenant): it adds each client it creates and looks up the organization of the client a command names, for any organization. No other role writes the directory; the token endpoint''s lookup reads it as svc_directory, under a policy of its own.';

comment on policy "The control plane manages client secrets" on app.client_secrets is 'svc_admin (svc-admin''s control plane) may add and revoke client secrets in every organization, as it creates clients and rotates or revokes their secrets for any organization. Its column grants, not this policy, keep the secret digests out of its reach: it reads every column but secret_sha256 and updates only revoked_at.';

comment on policy "The gate reads clients of the organization it was asked about" on app.api_clients is 'svc_gate (the credential path: api.begin_request, api.authenticate_client) reads API clients only of the organization named in svc.gate_organization, which each gate function sets to the organization its caller named for the length of its read and then clears. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s clients out of reach.';

comment on policy "The gate reads secrets of the organization it was asked about" on app.client_secrets is 'svc_gate reads client secrets (their digests) only of the organization named in svc.gate_organization, which api.authenticate_client and api.begin_request set to the organization their caller named for the length of their read. The credential check runs before any request context exists, so this setting, not the function''s WHERE, keeps every other organization''s secrets out of reach.';

comment on policy "The gate reads tokens of the organization it was asked about" on app_private.access_tokens is 'svc_gate reads access-token records only of the organization named in svc.gate_organization, which api.begin_request sets to the organization the request names (from the verified token) for the length of its lookup. A presented token is therefore checked only against its own organization''s records, and a wrong WHERE reads no other organization''s tokens.';

comment on policy "The gate records tokens of the organization it was asked about" on app_private.access_tokens is 'svc_gate inserts access-token records only for the organization named in svc.gate_organization, which api.access_token_record sets to the organization in which api.authenticate_client has just verified the client secret. A token can therefore be recorded, and later accepted by api.begin_request, only in the organization whose live secret was presented.';

comment on policy "The lookup sees the one client it was asked for" on app_private.client_directory is 'svc_directory, owner of api.client_organization, reads only the directory row of the client named in svc.directory_client, which the lookup sets to its argument for the length of its read. The directory spans every tenant and is read before any request context exists (by the token endpoint), so this policy, not the function''s WHERE, keeps the lookup to one client''s row.';

comment on policy "The worker purges token records that have run out" on app_private.access_tokens is 'svc_worker may delete only access-token records that expired more than a minute ago, in any organization (control.purge_expired_access_tokens, an hourly job). The worker can never delete the record of a live token, and its column grants let it read no token digest.';

comment on policy "The worker sees token records that have run out" on app_private.access_tokens is 'svc_worker sees only access-token records that expired more than a minute ago, and of them only the organization_id and expires_at columns it is granted: exactly what its purge deletes. It never sees a live token''s record or any token digest.';

comment on function app_private.tg__client_of_parent() is 'BEFORE INSERT OR UPDATE OF client_id on app.run_events and app.run_tool_calls (parent app.runs), app.report_results (app.report_runs), app.webhook_delivery_attempts (app.webhook_deliveries) and app.conversation_messages (app.conversations): sets the row''s client_id to its parent''s, whatever the writer said. The policies that show these rows "with their parent" can then judge the row alone (client_id is the request''s client), as Citus requires (it refuses a policy that reads another table), and since rows never change parent the copy stays true. It runs as svc_owner to read the parent past the writer''s policies, looked up by the new row''s own organization_id under svc_owner''s policy for the request''s organization.';

comment on function app_private.tg_api_clients__plan_allows_clients() is 'BEFORE INSERT on app.api_clients: refuses a client with an active licence that is not deleted in an organization on the Trial or Team plan, raising SVL01 PLAN_DOES_NOT_SUPPORT_API_CLIENTS, because those plans do not support API Clients (spec, Authentication). It runs as svc_owner to read the organization''s plan, within the row''s organization under svc_owner''s policy.';

comment on function app_private.tg_api_clients__touch() is 'BEFORE UPDATE on app.api_clients: sets updated_at, and increments authorization_version whenever the client''s Roles, status, licence status or licence level change (the count of changes to its authorization that the spec''s per-request checks name). Deletion is final: moving a deleted client to any other status raises SVC13 CLIENT_DELETED.';

comment on function app_private.tg_client_secrets__bump_client_version() is 'AFTER INSERT OR UPDATE on app.client_secrets: increments the owning client''s authorization_version, since a secret added or revoked changes what authenticates as that client. It runs as svc_owner and updates the client by the secret''s organization and client id, so it touches that one client, under svc_owner''s policy (the request''s organization, or any in the control plane''s operator session).';

comment on function app_private.shard_views_advance() is 'On a Citus worker, advances the node''s shard-view generation (the sequence app_private.shard_views_generation; nothing when it is absent, as on one server) for the event trigger app_private.tg_shard_views_stale, after DDL on the api schema or a GRANT or REVOKE by a superuser or a member of svc_api, holding the shard views'' advisory lock shared until that change ends so that a refresh (shard_views_create) waits for it; every copy of an api view made before then refuses to be read. It is a definer because nextval needs a privilege on that sequence which the role making the change need not hold, and it does nothing else and reads no table; it stays with the migrating role because only DDL reaches it.';

comment on function app_private.shard_views_current(bigint) is 'The gate in every copy of an api view on a Citus worker (schema api_shard_<shard>), evaluated once per statement: it raises SV500 SHARD_VIEWS_STALE unless the node''s shard-view generation is still the one the copy was made at, so a copy older than its view is never read, whoever names it; api.in_organization then reads the view function instead. It runs as svc_api, which is granted the generation sequence and svc_runtime is not; it reads no tenant row.';

comment on function app_private.statement_on_shards(text,text) is 'On a Citus worker, rewrites a request''s statement so that each api.<view>() it reads becomes the organization''s shard group''s copy api_shard_<shard>.<view> when this node''s copies are at its current generation, so a list''s filters, order and limit reach the shard''s indexes; otherwise, and always without Citus, it returns the statement unchanged. It is text only: both forms read the same rows under the same policies, as the caller. It runs as svc_api only because Citus tells which shard holds an organization only to a role that may read app.organizations.';

comment on function api.command_answered(bigint) is 'Raises SV500 COMMAND_ROW_COUNT (a 500: our bug) unless a command run under a fresh Idempotency-Key claim answered exactly one row, checked in the statement that stores that row as the key''s response; otherwise the transaction would commit the key claimed with no response, or with one other than the response sent. It reads and writes nothing; it is an svc_api definer like every api command, through which svc_runtime reaches app_private.raise, which it may not execute.';

comment on function api.require_any_role(text[],text) is 'Raises SVR03 ROLE_REQUIRED (403), naming the operation and the Roles it needs, unless the signed request context''s Roles include one of p_roles: commands call it first to enforce the spec''s Role matrix before they read or write anything. It reads no tenant row and judges only the context, which app.has_any_role checks through app_private.context_ok(), so a forged or copied context holds no Role; it runs as svc_api, like every api command, and raises through app_private.raise, which svc_runtime may not execute.';

comment on function api.service_schema_version() is 'The newest applied migration version (the greatest in public.schema_migrations), which /ready compares with the code''s: the service answers 503 while they differ. It runs as svc_gate because svc_runtime has no privilege on public.schema_migrations; it answers a version and no tenant data, so it needs no request context.';

comment on function app_private.capability_mac(text,text) is 'The HMAC-SHA256 (RFC 2104) of a capability link''s message (upload, file download, report download), keyed with app_private.context_keys and kept apart from context signatures by the label ''capability'' and a purpose label: a link''s token is this signature, so nothing secret is stored and a link cannot be forged or reused for another purpose or organization (its message names the organization). It runs as svc_gate, the only role that may read the key: the commands that mint and check links get the signature, never the key, and svc_runtime may not execute it.';

comment on function app_private.check_subject(text) is 'Checks a request''s subject.member_id: null passes as null; otherwise it must be the exact normalized email of an active member of the signed request''s organization, else SVV22 INVALID_SUBJECT_MEMBER at /subject/member_id, because possession of an email is not authorization and a subject adds no Roles (spec). It runs as svc_owner so it reads members the same way for every caller (api commands, the worker''s runs), and only those of app.current_organization_id() (none without a signed context), under svc_owner''s policy.';

comment on function app_private.context_mac(text,text,text,text) is 'The signature of a request context: HMAC-SHA256 keyed with app_private.context_keys over the organization, client, Roles and read flags, the backend pid and the transaction''s start time, so it matches only in this backend and this transaction. It runs as svc_gate, the only role that may read the key; app_private.set_context calls it, and svc_runtime may not execute it, so no runtime session can sign settings of its own choosing.';

comment on function app_private.context_ok() is 'Whether the transaction''s svc.* settings (organization, client, Roles, read flags) carry the signature app_private.set_context made for them, in this backend and this transaction; false when there is none. Every context accessor, and so every row policy and api view, reads through it, so settings written with set_config, or copied into another session or a later transaction, show nothing. It runs as svc_gate, the only role that may read app_private.context_keys, and computes context_mac''s formula inline because it runs at every policy check of every statement.';

comment on function app_private.may_read_internal_notes() is 'Whether the caller may read tickets'' internal notes: it may read tickets (app_private.may_read_tickets()) and holds member or manager, so finance and hr never see internal notes, even where their organization lets them read tickets. It reads no table itself; it is an svc_owner definer like the other policy helpers that policies and views call, may_read_tickets reading the organization''s ticket settings where no signed context carries them.';

comment on function app_private.set_context(text,text,text[],text) is 'Sets the transaction-local request context (svc.organization_id, svc.client_id, svc.roles, svc.read_flags) with its signature svc.context_mac, or clears it when the organization is null; without read flags given, it computes them from that organization''s ticket and time-entry settings for those Roles. Its callers run their standing checks first: api.begin_request, the worker''s delivery and job contexts, the beginnings of capability links. It runs as svc_gate because only svc_gate reads the signing key and, scoped by svc.gate_organization to the organization being set, its settings; svc_runtime may not execute it, so a runtime session gets a context only through api.begin_request.';

comment on policy "Clients see their own organization" on app.organizations is 'svc_api reads only the row of the signed request context''s organization in app.organizations. A client reads its own organization and never another; with no context, or a forged or copied one, it reads none.';

comment on policy "Clients with any Role see members of their organization" on app.members is 'svc_api reads members only of the signed request''s organization, and only when the client holds one of member, manager, finance or hr (the spec''s Role matrix for members). Column grants keep the HR-restricted fields out of this read; only app_private.member_hr_profile shows them, to hr.';

comment on policy "Commands act in the request's organization" on app.members is 'For svc_owner, svc_worker and svc_admin, every command: the members of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. Definers and triggers run inside a request (such as check_subject and the time-entry validation) thus read only that organization''s members, while the control plane manages the members of any organization.';

comment on policy "Commands act in the request's organization" on app.organizations is 'For svc_owner, svc_worker and svc_admin, every command: the signed request''s organization (id = app.current_organization_id()), or every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer or trigger run in a request reads only its own organization''s settings (plan, timezone, policies), while the control plane creates and configures any organization and the worker''s jobs span them.';

comment on policy "The gate reads the organization it was asked about" on app.organizations is 'svc_gate reads only the organization named in svc.gate_organization, which each gate function (api.begin_request, api.authenticate_client, app_private.set_context) sets to the organization its caller named for the length of its read and then clears. The credential path reads an organization''s status, plan and read settings before any request context exists, and this keeps a wrong WHERE from reading any other.';

comment on function app_private.tg__touch_version() is 'BEFORE UPDATE on app.organizations, members, projects, tasks, time_entries, approvals, integration_connections, webhook_endpoints and tickets: sets updated_at to now() and version to the old version plus one, whatever the update said. The version is the resource''s ETag, so every change, by any writer, makes an If-Match on the old version fail with 412 STALE_RESOURCE, and no writer can keep or choose a version.';

comment on function app_private.tg_organizations__seed_schemas() is 'AFTER INSERT on app.organizations: creates the new organization''s object schemas for project and task in app.object_schemas, which its custom-field definitions belong to and the schema endpoints list. It runs as the inserting role (the control plane), under the policy "Commands act in the request''s organization" on app.object_schemas.';

comment on function api.approval_exists(text) is 'Whether an approval with this id exists in the signed request''s organization, whatever its category: getApproval asks it when api.approvals shows nothing, to answer APPROVAL_ACCESS_DENIED (the caller''s Roles do not cover its resource) rather than APPROVAL_NOT_FOUND. It runs as svc_owner because svc_api''s policy shows only the approvals whose category the client''s Roles cover; it reads only the request''s organization (its WHERE and svc_owner''s policy) and answers a boolean, and on a Citus coordinator it refuses with SV500 NOT_IN_ITS_WORKER.';

comment on function api.require_time_entry_read() is 'Raises SVR03 ROLE_REQUIRED unless the caller may read time entries (app_private.may_read_time_entries(): manager, finance, or hr where the organization permits); a member-only client reads time only through the reporting views, as the spec''s Role matrix says. It reads no table; it runs as svc_api like every api command and raises through app_private.raise, which svc_runtime may not execute.';

comment on function api.time_entry_batch(jsonb,boolean) is 'createTimeEntryBatch, manager only (else SVR03 ROLE_REQUIRED): inserts each entry as createTimeEntry does, each in its own subtransaction, and reports each item as created (with its document) or failed (its codes, with pointers under /entries/<index>; a unique violation becomes EXTERNAL_ID_CONFLICT, a malformed or out-of-range value VALIDATION_FAILED). In atomic mode any failure raises every item''s problems together and keeps nothing; otherwise the valid entries stay. It runs as svc_api because svc_runtime has no privilege on app.time_entries: each insert takes the organization and creator from the signed context, and the policy "Managers record time" and the table''s triggers hold for every item.';

comment on function api.time_entry_create(jsonb) is 'createTimeEntry, manager only (else SVR03 ROLE_REQUIRED): inserts a draft entry from the body with the signed context''s organization and the calling client as its creator, and answers it as getTimeEntry does. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the policy "Managers record time" refuses any other organization or creator, and the table''s triggers validate the subject, project, task, work date and the member''s daily total.';

comment on function api.time_entry_delete(text) is 'deleteTimeEntry, manager only (else SVR03 ROLE_REQUIRED): marks the entry deleted (deleted_at) and writes a deleted row naming the calling client to app.time_entry_audit; an entry already deleted answers with no change (idempotent), an unknown one SVN04 TIME_ENTRY_NOT_FOUND, and one that is not draft or rejected is refused by tg_time_entries__lock (SVC17 TIME_ENTRY_LOCKED). It runs as svc_api because svc_runtime has no privilege on these tables; it reads and marks the entry by the signed context''s organization, under svc_api''s policies for managers.';

comment on function api.time_entry_get(text) is 'getTimeEntry: the entry''s document and version (its ETag) from api.time_entries, deleted entries excluded, after api.require_time_entry_read() (SVR03 ROLE_REQUIRED for a caller who may not read time entries). It runs as svc_api, under its policy "Managers, finance, and hr where permitted read time entries", which shows only the signed request''s organization.';

comment on function api.time_entry_submit(text) is 'submitTimeEntry, manager only (else SVR03 ROLE_REQUIRED): a draft or rejected entry gets a pending named-user approval request and becomes submitted (app_private.request_time_entry_approval); a submitted one stays as it is (its request stands), an approved one raises SVC17 TIME_ENTRY_LOCKED, a missing or deleted one SVN04 TIME_ENTRY_NOT_FOUND. Submitting never approves: only a named user decides, through the control plane. It runs as svc_api and locks the entry by the signed context''s organization; the approval request is written by the svc_owner helper, because svc_api may not write approvals.';

comment on function api.time_entry_update(text,integer[],jsonb) is 'updateTimeEntry, manager only (else SVR03 ROLE_REQUIRED): with a matching If-Match (else 412 STALE_RESOURCE) it changes only project_id, task_id, work_date, minutes, billable and notes, refusing status (APPROVAL_REQUIRED when asked to approve or reject, else IMMUTABLE_FIELD) and the fixed fields (id, object, member_id, subject, external_id, approval_id, created_at, updated_at: IMMUTABLE_FIELD) all together; tg_time_entries__lock refuses any change unless the entry is draft or rejected (SVC17 TIME_ENTRY_LOCKED), and the validation trigger checks the result. It runs as svc_api because svc_runtime has no privilege on app.time_entries; the row is locked and updated by the signed context''s organization, under the policy "Managers change time".';

comment on function app_private.may_read_time_entries() is 'Whether the caller may read time entries: manager or finance, or hr where the organization permits it (hr_may_read_time_entries). In a request the answer is the signed context''s time_entries read flag, computed by api.begin_request from the client''s Roles and that setting; without a signed context (a BI session) it reads the setting from the organization, and refuses on a Citus coordinator (SV500 NOT_IN_ITS_WORKER). It runs as svc_owner so this read of app.organizations works for callers that may not read it (svc_runtime, BI logins), and only for the caller''s own organization (app.current_organization_id()).';

comment on function app_private.request_time_entry_approval(text) is 'Opens, or reopens after a rejection, the pending named-user approval request (category project) for a draft or rejected, not deleted entry of the signed request''s organization, and marks the entry submitted in the same step, so a pending request always has a submitted entry; without a manager''s context, or for any other entry, it raises SVR05 APPROVAL_REQUIRED. It runs as svc_owner because svc_api may not write app.approvals (API clients neither write nor decide approvals); it reads and writes only by the request''s organization, under svc_owner''s policy.';

comment on policy "Clients see approvals of resources their Roles cover" on app.approvals is 'svc_api reads approvals only of the signed request''s organization, and of those only the ones whose resource the client''s Roles cover: category project needs manager, financial needs finance, any other (hr) needs hr (the spec''s Role matrix). svc_api has no policy to write approvals: they are requested by app_private.request_time_entry_approval and decided only by named users, through the control plane.';

comment on policy "Commands act in the request's organization" on app.approvals is 'For svc_owner, svc_worker and svc_admin, every command: the approvals of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner helpers that request and check approvals (request_time_entry_approval, approval_exists, tg_time_entries__submitted_has_approval) stay in the request''s organization, while the control plane''s decisions (control.approval_decide) reach any organization.';

comment on policy "Commands act in the request's organization" on app.time_entries is 'For svc_owner, svc_worker and svc_admin, every command: the time entries of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. The svc_owner triggers and helpers (the validation, the approval request) stay in the request''s organization, while the control plane''s approval decision moves an entry of any organization to approved or rejected.';

comment on policy "Commands act in the request's organization" on app.time_entry_audit is 'For svc_owner, svc_worker and svc_admin, every command: the time audit rows of the signed request''s organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations), in USING and WITH CHECK. A definer run in a request reaches only its own organization''s audit, while jobs and the control plane, whose work spans organizations, reach all of it.';

comment on policy "Managers change time" on app.time_entries is 'svc_api may update time entries only of the signed request''s organization and only when the client holds manager, before and after the change (USING and WITH CHECK), since only managers write time (spec). Which columns may change is for its column grants, and whether the entry may change at all for the triggers (tg_time_entries__lock: draft or rejected only).';

comment on policy "Managers record time" on app.time_entries is 'svc_api may insert a time entry only into the signed request''s organization, only when the client holds manager, and only with created_by_client_id set to the calling client, so the creator, which scopes external_id, cannot be forged. The table''s triggers then validate the entry.';

comment on policy "Managers write the time audit" on app.time_entry_audit is 'svc_api may insert into app.time_entry_audit only rows of the signed request''s organization whose actor_client_id is the calling client, and only when it holds manager (the Role that deletes time entries), so the audit names the real actor. svc_api has no policy to read, change or remove audit rows.';

comment on policy "Managers, finance, and hr where permitted read time entries" on app.time_entries is 'svc_api reads time entries only of the signed request''s organization, and only when app_private.may_read_time_entries() allows it: manager or finance, or hr where the organization permits (the spec''s Role matrix). A member-only client reads time only through the reporting views.';

comment on function app_private.tg_time_entries__lock() is 'BEFORE UPDATE on app.time_entries, the spec''s time-entry state machine: a deleted entry cannot change (SVN04 TIME_ENTRY_NOT_FOUND); a draft or rejected entry may change, and its status may move only to submitted (any other move raises SVR05 APPROVAL_REQUIRED: only a named user approves or rejects); a submitted entry moves only to approved or rejected with no other field changed, and never by svc_runtime or svc_api, since the decision comes from the control plane; every other change, to an approved entry included, raises SVC17 TIME_ENTRY_LOCKED. It runs as the updating role, because it judges current_user.';

comment on function app_private.tg_time_entries__no_delete() is 'BEFORE DELETE on app.time_entries: refuses every delete, by any role, with SVC17 TIME_ENTRY_LOCKED. Time entries are deleted by marking them (deleted_at, through deleteTimeEntry, audited) and are never removed, so their history and audit stay whole.';

comment on function app_private.tg_time_entries__submitted_has_approval() is 'AFTER INSERT OR UPDATE OF status on app.time_entries: a submitted entry must have a pending approval request for it in its organization, else SVR05 APPROVAL_REQUIRED, because submitting is asking a named user: the only way to submitted is submitTimeEntry (app_private.request_time_entry_approval), which writes both. It runs as svc_owner so the check sees the approval whatever the writer''s own approval policy shows, within the row''s organization.';

comment on function app_private.tg_time_entries__validate() is 'BEFORE INSERT OR UPDATE on app.time_entries (not for deleted rows, nor for a status move out of submitted or approved): the subject must be an active member of the organization (INVALID_SUBJECT_MEMBER), the project active with the work date within its dates and the task a non-archived task of that project (INVALID_WORK_DATE), the work date no later than the organization''s today (in its timezone) plus time_entry_future_days and no more than 366 days ago (INVALID_WORK_DATE), and the member''s day at most 1440 minutes in all (INVALID_DURATION), serialized per member and day by an advisory lock so that two concurrent entries cannot both fit. Every problem is raised together (app_private.raise_errors, SVV22). It runs as svc_owner so it reads the members, projects, tasks, organization and the member''s other entries whatever the writer may read, within the row''s organization under svc_owner''s policy.';

comment on function api.conversation_archive(text) is 'archiveConversation: sets the calling client''s active conversation to archived (archived_at now); a conversation already archived is returned unchanged, and its messages are kept as audit records. It runs as svc_api because svc_runtime holds no table privilege: the lookup (api.conversation_get, SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which show only conversations of the request''s organization created by the calling client, and tg_conversations__lifecycle keeps the conversation archived for good.';

comment on function api.conversation_clear_context(text) is 'clearConversationContext: starts the working context afresh in any status (context_from_seq moves to the last message, the compacted summary is dropped, context_cleared_at is set); the history and the status stay. It runs as svc_api so that the lookup (SVN04 CONVERSATION_NOT_FOUND) and the update pass svc_api''s policies, which admit only a conversation of the request''s organization created by the calling client; the update touches only the working-context columns.';

comment on function api.conversation_create(text,jsonb,jsonb) is 'createConversation: inserts an active conversation for the request''s organization and the calling client, with its title (an empty title means none), metadata and a subject resolved to one active member by app_private.conversation_subject, fixed for the conversation''s life. It runs as svc_api because svc_runtime holds no table privilege; svc_api''s "Clients start conversations" policy admits only the request''s organization and client, so no caller starts a conversation in another client''s name.';

comment on function api.conversation_get(text) is 'The calling client''s conversation p_id as its wire document (version null: conversations carry no ETag), or SVN04 CONVERSATION_NOT_FOUND when api.conversations does not show it. It runs as svc_api, whose policies show only conversations of the request''s organization created by the calling client, so another client''s conversation answers as missing.';

comment on function api.conversation_message_create(text,jsonb) is 'createConversationMessage: locks the calling client''s conversation (SVN04 CONVERSATION_NOT_FOUND) and refuses an archived one (SVC09 CONVERSATION_ARCHIVED), content longer than app_private.message_budget() characters (SVV22 CONTEXT_LIMIT_EXCEEDED) and a file_reference block naming no ready file the client may read (SVV22 MESSAGE_CONTENT_INVALID); it then appends the user message, compacts the working context and queues a chat run (kind agent, no agent, the conversation''s client and subject) whose answer becomes the next message. It runs as svc_api so every read and write is under svc_api''s policies: the request''s organization, the client''s own conversation and run, and messages of role user only.';

comment on function app_private.conversation_compact(text,text) is 'Keeps a conversation''s working context within app_private.context_budget() characters: while the messages after context_from_seq exceed it, the oldest one moves into context_summary (its role and the start of its text; the summary keeps its newest 4,000 characters) and context_from_seq moves past it, while the history stays. It belongs to svc_owner because it runs both in the client''s request (after a user message) and in the worker''s session when a chat run''s reply is appended (tg_runs__conversation_reply), where svc_api''s policies show nothing; its statements name p_org, and svc_owner''s policy keeps a request to its own organization.';

comment on function app_private.conversation_subject(jsonb) is 'Resolves a conversation''s subject to one active member id: {"member_id": email} exactly, or {"display_name": name} case-insensitively, read through api.members; any other shape is SVV22 SUBJECT_NOT_SUPPORTED, no match SUBJECT_NOT_FOUND, several active members with that name SUBJECT_AMBIGUOUS. It is svc_api''s so that whoever calls it reads members under svc_api''s policies: only members of the request''s organization that the client may see.';

comment on policy "Clients change their own conversations" on app.conversations is 'svc_api may update only conversations of the request''s organization created by the calling client (client_id = app.current_client_id()), checked before and after the change, so no command touches or hands over another client''s conversation: the spec gives a conversation to the client that created it alone. Column grants limit svc_api to the status, archiving, message-count and working-context columns, and tg_conversations__lifecycle keeps client, subject and history fixed.';

comment on policy "Clients see their own conversations" on app.conversations is 'svc_api reads only conversations of the request''s organization whose client_id is the calling client: a conversation is visible to the client that created it, not to the rest of its organization (spec Role matrix: runs, conversations). Without a valid signed context nothing is visible.';

comment on policy "Clients start conversations" on app.conversations is 'svc_api may insert a conversation only into the request''s organization and with client_id the calling client, so a client cannot start a conversation in another client''s name or organization.';

comment on policy "Clients write to their own conversations" on app.conversation_messages is 'svc_api may insert only messages of role user, in the request''s organization, whose client_id is the calling client; tg__client_of_parent copies client_id from the conversation before the check, so this admits a message only to one of the client''s own conversations. The assistant''s replies are appended by tg_runs__conversation_reply as svc_owner, never by a request.';

comment on policy "Commands act in the request's organization" on app.conversation_messages is 'svc_owner, svc_worker and svc_admin read and write messages of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The assistant''s replies (tg_runs__conversation_reply), compaction and the worker''s chat context run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';

comment on policy "Commands act in the request's organization" on app.conversations is 'svc_owner, svc_worker and svc_admin read and write conversations of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Compaction, the chat reply trigger, tg__client_of_parent and the worker''s context expiry run under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs that span organizations reach them all.';

comment on policy "Messages are readable with their conversation" on app.conversation_messages is 'svc_api reads a message only in the request''s organization and when its client_id is the calling client. client_id is copied from the conversation when the message is inserted (tg__client_of_parent) and a message never changes conversation, so a message is visible exactly when its conversation is, without the policy reading another table (Citus refuses such a policy).';

comment on function app_private.tg_conversation_messages__append() is 'BEFORE INSERT, UPDATE or DELETE row trigger on app.conversation_messages (_100_append): messages are kept as written, for audit (an update or delete is SVC09 CONFLICT); an insert locks its conversation, is refused as a user message to an archived conversation (SVC09 CONVERSATION_ARCHIVED; a run''s reply still lands), must take seq message_count + 1 (SVC09 CONFLICT: messages are appended in order), and advances the conversation''s message_count and last_activity_at. It runs as the writer (svc_api in a request, svc_owner for a reply), so every writer is held to it.';

comment on function app_private.tg_conversation_messages__emit() is 'AFTER INSERT row trigger on app.conversation_messages (_950_emit_event): records a conversation.message.created event for every message, the client''s and the assistant''s, in the writer''s transaction (the outbox the webhooks are fanned out from). A definer as svc_owner because svc_api may neither execute app_private.emit_event nor write app.events; the event names the message''s own organization.';

comment on function app_private.tg_conversations__lifecycle() is 'BEFORE INSERT or UPDATE row trigger on app.conversations (_100_lifecycle): a conversation starts active; its organization, id, client, subject and created_at never change (the spec fixes the subject for the conversation); history only grows and the working context only moves forward, never past the last message (each SVC09 CONFLICT); an archived conversation stays archived (SVC09 CONVERSATION_ARCHIVED). It also stamps updated_at, for every writer.';

comment on function app_private.tg_runs__conversation_reply() is 'AFTER UPDATE OF status row trigger on app.runs (_910_conversation_reply): when a conversation''s run reaches succeeded, failed or cancelled, it appends the assistant''s message at the conversation''s next seq (the run''s output text, or an error block with the run''s error code or RUN_CANCELLED, with run_id) and compacts the working context, as the spec turns a chat run''s answer into a conversation message. A definer as svc_owner because the run usually ends in the worker''s session, where svc_api''s policies show nothing, and svc_api may write only user messages; it names the run''s own organization.';

comment on function api.project_create(jsonb,integer) is 'createProject (manager, else SVR03 ROLE_REQUIRED): checks the client''s schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the project into the request''s organization with the organization''s currency, a normalized manager email and the calling client as creator; the service assigns id, status (active) and audit fields, and the project triggers check references and custom fields. It runs as svc_api because svc_runtime holds no table privilege: "Managers create projects" and svc_api''s column grants admit only the request''s organization and the columns a client may set.';

comment on function api.project_get(text) is 'The project p_id as its wire document and version (its ETag), from api.projects, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show projects of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance financial, hr staffing fields).';

comment on function api.project_set_status(text,text) is 'archiveProject and restoreProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), changes nothing when it already has p_status, and otherwise sets the status, which tg_projects__status_change refuses while work is still active (SVC15 PROJECT_ARCHIVE_BLOCKED) and tg_projects__check_references rechecks on restore. It runs as svc_api under "Managers update projects", so only a manager''s request in its own organization changes a status, and only here (updateProject refuses status).';

comment on function api.project_update(text,integer[],jsonb,integer) is 'updateProject (manager, else SVR03 ROLE_REQUIRED): locks the project of the request''s organization (SVN04 PROJECT_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses id, organization, status, currency, audit fields and version (SVV22 IMMUTABLE_FIELD), checks the schema version and every custom-field key against the caller''s Roles, then sets only the fields sent (custom fields merged, a null clears). It runs as svc_api under "Managers update projects" and column grants that keep id, organization, currency and audit fields out of a client''s reach.';

comment on function api.task_add_note(text,text,text) is 'addTaskNote: a manager, or a member where the task''s workflow lets members add notes (members_may_add_notes; else SVR03 ROLE_REQUIRED), adds a note to a task of the request''s organization (SVN04 TASK_NOT_FOUND), with an optional subject that must be an active member (INVALID_SUBJECT_MEMBER) and the calling client as author; notes are append-only. It runs as svc_api under "Managers, or members where the task policy permits, add notes", and tg_task_notes__members_may_add holds the insert to the same rule.';

comment on function api.task_create(jsonb,integer) is 'createTask (manager, else SVR03 ROLE_REQUIRED): checks the schema version (SVC14 OBJECT_SCHEMA_CHANGED), then inserts the task into the request''s organization in its default workflow''s initial status, priority medium unless given, with normalized assignee emails and the calling client as creator; the task triggers require an active project of the organization, distinct active assignees, the initial status and valid custom fields. It runs as svc_api under "Managers create tasks" and svc_api''s column grants, since svc_runtime holds no table privilege.';

comment on function api.task_get(text) is 'The task p_id as its wire document and version (its ETag), from api.tasks, or no row when it is not visible there. It runs as svc_api because svc_runtime reads no table itself: svc_api''s policies show tasks of the request''s organization to a client holding any Role, and the view projects the fields per Role (finance project-financial, hr staffing context).';

comment on function api.task_replace_dependencies(text,integer[],text[]) is 'replaceTaskDependencies (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses predecessors that are not tasks of the organization (SVV22 TASK_NOT_FOUND), and replaces the whole predecessor set, which tg_task_dependencies__no_cycle checks for cycles and cross-project links (SVV24 DEPENDENCY_CYCLE); the task''s updated_at moves so that its ETag changes. It runs as svc_api under "Managers change dependencies" and "Managers update tasks".';

comment on function api.task_set_archived(text,boolean) is 'archiveTask and restoreTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND) and sets or clears archived_at, changing nothing when the task is already so; tg_tasks__archive_rules refuses archiving while open tasks depend on it and restoring while its project is archived (SVC16 TASK_ARCHIVE_BLOCKED). It runs as svc_api under "Managers update tasks", so only a manager''s request in its own organization archives or restores.';

comment on function api.task_transition(text,text,timestamp with time zone,text) is 'transitionTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization, checks the subject (an active member, INVALID_SUBJECT_MEMBER), and moves the task along the named transition only if its workflow offers it from the current status and the task is not archived (SVV23 INVALID_TRANSITION); completed_at is accepted only into a done status and not in the future (SVV22 VALIDATION_FAILED). It records the transition in app.task_activity with the calling client as actor and the subject as whom the work concerns, running as svc_api under "Managers update tasks" and "Managers record task activity".';

comment on function api.task_update(text,integer[],jsonb,integer) is 'updateTask (manager, else SVR03 ROLE_REQUIRED): locks the task of the request''s organization (SVN04 TASK_NOT_FOUND), requires its current version in If-Match (SVS12 STALE_RESOURCE), refuses what changes only elsewhere or never (project, status, completed_at, dependencies, transitions, archived, identity and audit fields: SVV22 IMMUTABLE_FIELD, naming the endpoint to use), checks the schema version and each custom-field key against the caller''s Roles, then sets only the fields sent. It runs as svc_api under "Managers update tasks" and svc_api''s column grants, with the task triggers holding references, archive rules and custom fields.';

comment on function app_private.custom_field_errors(text,text,jsonb,jsonb,text[],boolean) is 'Lists every problem of a custom-field change from p_old to p_new on p_org''s p_object_type: unknown fields, or with p_roles fields those Roles may not read (CUSTOM_FIELD_NOT_FOUND), read-only or Role-forbidden fields (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), values of the wrong type or option (CUSTOM_FIELD_VALUE_INVALID), required fields missing or cleared (CUSTOM_FIELD_REQUIRED); with p_roles null (the control plane) only types and requirements apply. It is svc_owner''s definer because it must read every definition, those svc_api''s policy hides from the caller''s Roles included; it trusts p_org, so neither svc_api nor svc_runtime may execute it, and svc_owner''s policy keeps a request to its own organization.';

comment on function app_private.custom_field_patch_errors(text,jsonb,jsonb) is 'Checks the custom_fields of an updateProject or updateTask patch key by key, changed or not: each key must be a field the request''s Roles may read (else CUSTOM_FIELD_NOT_FOUND, so a hidden value cannot be probed by sending guesses) and write (CUSTOM_FIELD_READ_ONLY, CUSTOM_FIELD_FORBIDDEN), then adds the value problems custom_field_errors finds for the other keys, every problem at once. A definer as svc_owner so it sees the definitions the caller''s Roles hide and may call custom_field_errors; it takes the organization and Roles from the request''s signed context.';

comment on function app_private.project_archive_blockers(text,text) is 'Why project p_project_id of p_org cannot be archived yet: its unarchived tasks in an open status, and its undeleted time entries submitted and awaiting approval; an empty array when there are none. A definer as svc_owner because tg_projects__status_change runs as the writer (svc_api in a request) and must count all such work, whatever the caller''s Roles let it read; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';

comment on function app_private.readable_custom_fields(text,text,jsonb) is 'The custom-field values a reader may see: of p_values, only the keys that are fields of p_object_type whose definitions svc_api''s "Clients see the custom fields their Roles may read" shows (the request''s organization, a readable Role held); api.projects and api.tasks call it for each row. It is svc_api''s definer so that whoever calls it (the views, svc_runtime) reads the definitions under that policy: a field hidden from the caller''s Roles never reaches the wire, and without a valid context nothing does.';

comment on function app_private.task_archive_blockers(text,text) is 'The ids of unarchived tasks in an open status that have task p_task_id of p_org as a predecessor: open work still waiting on it, which blocks archiving it. A definer as svc_owner so that tg_tasks__archive_rules sees every dependent task of the organization whoever writes; each statement names p_org, and svc_owner''s policy keeps a request to its own organization.';

comment on policy "Clients see dependencies in their organization" on app.task_dependencies is 'svc_api reads every task dependency of the request''s organization, with no Role condition: the API shows a dependency as a task''s predecessor_task_ids, which api.tasks projects for member and manager only. Another organization''s dependencies, and all of them without a valid signed context, are invisible.';

comment on policy "Clients see notes in their organization" on app.task_notes is 'svc_api reads task notes of the request''s organization only for a client holding member or manager: notes belong to a task''s work context, which finance and hr (limited to the project-financial and staffing context) do not see.';

comment on policy "Clients see task activity of their organization" on app.task_activity is 'svc_api reads task activity (transitions with their actor and subject) of the request''s organization only for a client holding member or manager, the Roles that see a task''s whole work context; finance and hr do not.';

comment on policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions is 'svc_api reads a custom-field definition only in the request''s organization and when its readable_roles share a Role with the request''s Roles (app.current_roles()). A field the caller may not read is thus absent from its schemas and its values are dropped by readable_custom_fields, indistinguishable from a field that does not exist.';

comment on policy "Clients see their organization's object schemas" on app.object_schemas is 'svc_api reads the object schemas (project, task) and their schema_version of the request''s organization only; which fields a schema lists is decided by the custom-field definitions'' own policy.';

comment on policy "Clients see their organization's workflows" on app.task_workflow_statuses is 'svc_api reads the task workflow statuses (each with its category open, done or cancelled, and the initial one) of the request''s organization only, as the task commands and api.tasks need; svc_api may not write them: they are seeded with the organization.';

comment on policy "Clients see their organization's workflows" on app.task_workflow_transitions is 'svc_api reads the named task workflow transitions of the request''s organization only: what transitionTask accepts and what api.tasks offers on each task. svc_api may not write them: they are seeded with the organization.';

comment on policy "Clients see their organization's workflows" on app.task_workflows is 'svc_api reads the task workflows of the request''s organization only, with the organization''s task policy (members_may_add_notes, allow_cross_project_dependencies). svc_api may not write them: the workflow is seeded with the organization and its policy set by svc-admin.';

comment on policy "Clients with any Role see projects of their organization" on app.projects is 'svc_api reads projects of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read projects. Which fields each Role sees is the api.projects view''s projection (finance financial fields, hr staffing fields).';

comment on policy "Clients with any Role see tasks of their organization" on app.tasks is 'svc_api reads tasks of the request''s organization for a client holding any of member, manager, finance or hr, as the spec''s Role matrix lets every Role read tasks. Which fields each Role sees is the api.tasks view''s projection (finance project-financial context, hr staffing context).';

comment on policy "Commands act in the request's organization" on app.custom_field_definitions is 'svc_owner, svc_worker and svc_admin read and write custom-field definitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). custom_field_errors and custom_field_patch_errors read every definition here, those the caller''s Roles hide included, yet never another organization''s in a request; svc-admin defines and deletes fields for any organization.';

comment on policy "Commands act in the request's organization" on app.object_schemas is 'svc_owner, svc_worker and svc_admin read and write object schemas of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). Under it svc-admin''s sessions seed a new organization''s schemas and bump schema_version when a field changes, while a request reaches its own organization''s alone.';

comment on policy "Commands act in the request's organization" on app.projects is 'svc_owner, svc_worker and svc_admin read and write projects of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The triggers of tasks, time entries and tickets read a row''s project under it, so a definer''s wrong WHERE still reaches no other organization in a request, while jobs and the control plane reach them all.';

comment on policy "Commands act in the request's organization" on app.task_activity is 'svc_owner, svc_worker and svc_admin read and write task activity of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves write task history only through svc_api''s "Managers record task activity".';

comment on policy "Commands act in the request's organization" on app.task_dependencies is 'svc_owner, svc_worker and svc_admin read and write task dependencies of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_task_dependencies__no_cycle and task_archive_blockers walk the organization''s dependency graph under it, past svc_api''s Role checks but never into another organization in a request.';

comment on policy "Commands act in the request's organization" on app.task_notes is 'svc_owner, svc_worker and svc_admin read and write task notes of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). It is every tenant table''s policy for the owner, worker and admin roles; requests themselves add notes only through svc_api''s "Managers, or members where the task policy permits, add notes".';

comment on policy "Commands act in the request's organization" on app.task_workflow_statuses is 'svc_owner, svc_worker and svc_admin read and write task workflow statuses of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The task triggers and archive blockers read statuses under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';

comment on policy "Commands act in the request's organization" on app.task_workflow_transitions is 'svc_owner, svc_worker and svc_admin read and write task workflow transitions of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). tg_tasks__legal_transition reads transitions under it in a request, and svc-admin''s session seeds a new organization''s default workflow.';

comment on policy "Commands act in the request's organization" on app.task_workflows is 'svc_owner, svc_worker and svc_admin read and write task workflows of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency and note triggers read the task policy under it in a request, and svc-admin seeds the default workflow and sets the task policy for any organization.';

comment on policy "Commands act in the request's organization" on app.tasks is 'svc_owner, svc_worker and svc_admin read and write tasks of the request''s organization (app.current_organization_id(), from the verified signed context), or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The dependency, note and time-entry triggers and the archive blockers read tasks under it whatever the caller''s Roles, so a definer''s wrong WHERE still reaches no other organization in a request.';

comment on policy "Managers change dependencies" on app.task_dependencies is 'svc_api may insert and delete (and read) task dependencies only in the request''s organization and only for a client holding manager, checked before and after the change: replaceTaskDependencies is a manager''s operation. Cycles and cross-project links are tg_task_dependencies__no_cycle''s to refuse.';

comment on policy "Managers create projects" on app.projects is 'svc_api may insert a project only into the request''s organization and only for a client holding manager, since createProject is a manager''s operation; column grants leave id, status, version and audit fields to the service.';

comment on policy "Managers create tasks" on app.tasks is 'svc_api may insert a task only into the request''s organization and only for a client holding manager, since createTask is a manager''s operation; column grants leave id, version, completion, archiving and audit fields to the service.';

comment on policy "Managers record task activity" on app.task_activity is 'svc_api may insert task activity only in the request''s organization, for a client holding manager, and with actor_client_id the calling client: transitions are a manager''s, and the client is always the recorded actor (a subject only says whom the work concerns). svc_api may neither update nor delete it: task history is append-only.';

comment on policy "Managers update projects" on app.projects is 'svc_api may update only projects of the request''s organization, for a client holding manager, checked before and after the change so no project moves to another organization: updateProject, archiveProject and restoreProject are manager operations. Column grants keep id, organization, currency and audit fields fixed.';

comment on policy "Managers update tasks" on app.tasks is 'svc_api may update only tasks of the request''s organization, for a client holding manager, checked before and after the change so no task moves to another organization: updating, transitioning, archiving a task and replacing its dependencies are manager operations. Column grants keep id, organization, project and workflow fixed.';

comment on policy "Managers, or members where the task policy permits, add notes" on app.task_notes is 'svc_api may insert a note only in the request''s organization, with author_client_id the calling client, for a client holding manager or member; whether a member-only client may (the workflow''s members_may_add_notes) is checked by tg_task_notes__members_may_add, because a policy that reads another table is refused on Citus. Notes are append-only: svc_api may neither update nor delete them.';

comment on function app_private.tg__check_custom_fields() is 'BEFORE INSERT or UPDATE row trigger on app.projects and app.tasks (_300_check_custom_fields, its argument the object type): when custom_fields change, validates them with custom_field_errors and raises every problem at once (SVV22, or SVR04 when the first is CUSTOM_FIELD_FORBIDDEN), then strips nulls (a null clears a value). Roles apply to a request (a client in the signed context) and to any svc_runtime session, while other writers (svc-admin, migrations) are held to types and requirements; a definer as svc_owner because custom_field_errors reads the definitions the caller''s Roles hide.';

comment on function app_private.tg_custom_field_definitions__bump_schema_version() is 'AFTER INSERT, UPDATE or DELETE row trigger on app.custom_field_definitions (_900_bump_schema_version): every change of a field definition increments its object type''s schema_version in app.object_schemas, so a client that sends an older Svc-Schema-Version learns that its schema copy is stale (SVC14 OBJECT_SCHEMA_CHANGED, from app_private.check_schema_version). It runs as the writer, svc-admin''s field commands.';

comment on function app_private.tg_organizations__seed_task_workflow() is 'AFTER INSERT row trigger on app.organizations (_810_seed_task_workflow): gives every new organization its default task workflow (app_private.seed_default_task_workflow): todo (initial), in_progress, blocked, done and cancelled, with the transitions start, block, unblock, complete, cancel and reopen, so createTask always finds a default workflow and its initial status. It runs as the writer, the control plane creating the organization.';

comment on function app_private.tg_projects__check_references() is 'BEFORE INSERT or UPDATE row trigger on app.projects (_200_check_references): on insert, on a change of the field, and on restore (archived to active), customer_id must be an undeleted company (com_) of the project''s organization (VALIDATION_FAILED) and manager_member_id an active member of it holding the manager Role (INVALID_MANAGER), raised together as SVV22. A definer as svc_owner so that every writer is held to the spec''s rule that references belong to the same organization and are not deleted, although svc_api cannot read customers.';

comment on function app_private.tg_projects__status_change() is 'BEFORE UPDATE OF status row trigger on app.projects (_150_status_change): archiving is refused while app_private.project_archive_blockers reports open tasks or time awaiting approval (SVC15 PROJECT_ARCHIVE_BLOCKED), the spec''s "no active workflow blocks it"; it sets archived_at on archiving and clears it on restore. It runs as the writer, and the blockers helper counts past the caller''s Roles.';

comment on function app_private.tg_task_dependencies__no_cycle() is 'BEFORE INSERT or UPDATE row trigger on app.task_dependencies (_100_no_cycle): serializes dependency changes per organization with an advisory transaction lock and requires read committed (else SVC09 CONFLICT), so two concurrent inserts cannot each pass the check and close a cycle together; both tasks must be of the row''s organization (SVN04 TASK_NOT_FOUND), a predecessor in another project needs the workflow''s allow_cross_project_dependencies, and a predecessor that already depends on the task, directly or not, is refused (both SVV24 DEPENDENCY_CYCLE). A definer as svc_owner so it walks the organization''s whole dependency graph for every writer.';

comment on function app_private.tg_task_notes__members_may_add() is 'BEFORE INSERT row trigger on app.task_notes (_010_members_may_add): in a request (a signed context naming an organization), a client without manager may add a note only when the task''s workflow has members_may_add_notes, else SVR03 ROLE_REQUIRED, the spec''s "member where the task policy permits"; writers outside a request (svc-admin, migrations) answer to no Role. A definer as svc_owner to read the task and its workflow; the rule lives here because a row policy that reads another table is refused on Citus.';

comment on function app_private.tg_tasks__archive_rules() is 'BEFORE UPDATE row trigger on app.tasks (_120_archive_rules): archiving stamps archived_at with now and is refused while unarchived open tasks depend on the task; any other change to a task of an archived project, restoring included, is refused (restore the project first), and an archived task changes only by being restored; each refusal is SVC16 TASK_ARCHIVE_BLOCKED. A definer as svc_owner so the project and every dependent task are seen whoever writes.';

comment on function app_private.tg_tasks__check_references() is 'BEFORE INSERT or UPDATE row trigger on app.tasks (_200_check_references): on insert or a change of project, the project must be an active project of the task''s organization (SVN04 PROJECT_NOT_FOUND); on insert or a change of assignees, they must be distinct active members of the organization (SVV22 INVALID_ASSIGNEE). A definer as svc_owner so every writer is held to references within its own organization, whatever the caller''s Roles let it read.';

comment on function app_private.tg_tasks__legal_transition() is 'BEFORE INSERT or UPDATE row trigger on app.tasks (_150_legal_transition): a new task starts in its workflow''s initial status, a status changes only along a transition of the task''s workflow, completed_at is set on entering a done status (now unless given), cleared on leaving it and never changed otherwise, and a task never changes workflow; each refusal is SVV23 INVALID_TRANSITION. A definer as svc_owner so that every writer, not only transitionTask, follows the organization''s workflow as the spec''s state machine requires.';

comment on function api.integration_connection_hidden_reason(text) is 'Why getIntegrationConnection, having found no row p_id in api.integration_connections, may not show it: ''personal'' (a named user''s connection, which API Clients never use: PERSONAL_CONNECTION_NOT_ALLOWED), or the Role it is relevant to (''finance'' for accounting, ''manager'' for any other category: ROLE_REQUIRED); null when the request''s organization has no such connection (INTEGRATION_CONNECTION_NOT_FOUND). It runs as svc_owner because svc_api''s policy hides exactly those rows, and it returns the reason word alone, never the row; its WHERE and svc_owner''s policy keep it to the request''s organization.';

comment on function api.integration_readiness(text) is 'checkIntegrationConnectionReadiness, performing nothing: whether an organization-owned connection relevant to the caller''s Roles (accounting to finance, every other category to manager) offers p_capability and is connected with no action required, with machine-readable blockers and safe remediation text (INTEGRATION_CONNECTION_NOT_READY, ROLE_REQUIRED, PERSONAL_CONNECTION_NOT_ALLOWED, CAPABILITY_NOT_AVAILABLE). It runs as svc_owner so that it can see the personal and Role-hidden connections svc_api''s policy hides, only to name the blocker (it returns the id of a visible connection alone); it reads the request''s organization only, and raises SV500 CONTEXT_MISSING without a request context.';

comment on function api.invoice_attach_pdf(text,text,bytea) is 'sendInvoice''s second step, in the transaction of api.invoice_send: stores the issued invoice''s PDF as a retained financial-record file linked to the invoice (size and SHA-256 computed here from the bytes) and sets its pdf_file_id, once per invoice; a draft or an invoice that already has its PDF is refused (SVC09 INVOICE_NOT_EDITABLE), and so is anything but a %PDF- document ending in %%EOF with a plain .pdf name (SVV22 VALIDATION_FAILED). It runs as svc_owner because svc_api may write neither file contents nor pdf_file_id; it takes the invoice only in the request''s organization and only when the caller holds manager or finance, which it checks itself since svc_owner''s policy does not (INVOICE_NOT_FOUND otherwise).';

comment on function api.invoice_create(jsonb) is 'createInvoice: a draft in the request''s organization for a billing customer (cus_) of that organization that is not deleted (else SVV22 VALIDATION_FAILED), in the body''s currency, else the customer''s, else the organization''s, which must be an ISO 4217 code; its lines are validated and written by app_private.invoice_set_lines, and the triggers compute every amount and total (a client never supplies totals). It runs as svc_api, so svc_runtime, which holds no table privilege, writes only under svc_api''s column grants and policies: the request''s organization and the manager or finance Role ("Managers and finance write invoices").';

comment on function api.invoice_replace_lines(text,integer[],jsonb) is 'replaceInvoiceLines: replaces every line of a draft at once, the new set validated as a whole so that it is accepted entirely or nothing changes, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and that the invoice is a draft (SVC09 INVOICE_NOT_EDITABLE, since only a draft is editable). It always writes the invoice row, so new lines are a new version even when the totals stay. It runs as svc_api: only the request''s organization and the manager or finance Role, through svc_api''s policies on invoices and lines (INVOICE_NOT_FOUND otherwise).';

comment on function api.invoice_send(text,boolean) is 'sendInvoice, the database half: issues a draft of the request''s organization (status sent: the lifecycle trigger numbers it, fixes its dates and starts the accounting sync) and returns what the PDF and the email need; a non-draft is refused (SVC09 WORKFLOW_BLOCKED), and so is an email to a customer without a delivery email (SVV22 CUSTOMER_DELIVERY_DETAILS_MISSING). The server then attaches the PDF (api.invoice_attach_pdf) and hands the email over before committing, so a refused email rolls back the number, the PDF and the status together, and lock_timeout 5s bounds the wait for the organization''s number counter (55P03, answered 409 with Retry-After). It runs as svc_owner because svc_api may not write statuses or numbers; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';

comment on function api.invoice_update(text,integer[],jsonb) is 'updateInvoice: changes the keys present in p_patch (customer_id, currency, issue_date, due_date, memo, lines) of a draft, after app_private.invoice_lock has checked If-Match (SVS12 STALE_RESOURCE) and the draft status (SVC09 INVOICE_NOT_EDITABLE); a new customer must be a billing customer of the organization that is not deleted, and a new currency an ISO 4217 code (SVV22 VALIDATION_FAILED). It runs as svc_api, so it writes only the draft fields svc_api''s column grants allow, in the request''s organization and with the manager or finance Role ("Managers and finance change invoices").';

comment on function api.invoice_void(text) is 'voidInvoice: an issued invoice without recorded payments becomes void and stays (issued invoices are never deleted; a void one is returned unchanged); a draft, an invoice with payments, one whose accounting sync is in flight, or one whose last sync failed without a definite answer (the provider may hold it) is refused with SVC09 WORKFLOW_BLOCKED. A synchronized invoice is voided only through a ready accounting connection (else ACCOUNTING_CONNECTION_NOT_READY) that offers invoice.void, and the void is queued for synchronization too. It runs as svc_owner because svc_api may not write statuses or sync fields; it takes the invoice only in the request''s organization and checks the manager or finance Role itself (INVOICE_NOT_FOUND otherwise).';

comment on function api.payment_create(jsonb) is 'createPayment: records an externally received payment (it charges nothing) of an invoice of the request''s organization and returns it with the updated invoice; the _100_apply trigger checks it against the invoice (issued, same currency, no more decimals than the currency has, not above the amount due) and adds it to amount_paid. It runs as svc_api, so the invoice must be readable with the manager or finance Role (else INVOICE_NOT_FOUND) and the insert passes "Managers and finance record payments"; the invoice''s amount_paid and status, which svc_api may not write, are written by that trigger as svc_owner.';

comment on function app_private.invoice_recompute_totals(text[],text[]) is 'Sets each named invoice''s subtotal, tax_total and total to the sums of its lines'' rounded amounts and taxes (p_orgs[n] and p_invoices[n] name one invoice and its organization), writing only the invoices whose totals changed; called once per statement by the line triggers (tg_invoice_lines__totals_changed). It is a security definer of svc_owner because the writer of the lines (svc_api) may not write totals, which only the service calculates; every update names its organization, and svc_owner''s policy refuses any but the request''s outside an operator session.';

comment on policy "Clients see customers of their organization" on app.customers is 'svc_api reads, whatever the caller''s Roles, the customers of the request''s organization (from the signed context; nothing without one): the API has no customer endpoint, but its invoice commands check that a customer_id names a billing customer (cus_) of the caller''s organization that is not deleted. Customers are managed through the control plane only, so svc_api has no write policy.';

comment on policy "Clients see organization connections relevant to their Roles" on app.integration_connections is 'svc_api reads the integration connections of the request''s organization that are organization-owned and relevant to a held Role: accounting connections with finance, every other category with manager (app_private.integration_visible), as the spec''s Role matrix says. Personal connections belong to a named user and are never shown to an API Client (only named as a blocker by api.integration_readiness and api.integration_connection_hidden_reason); the API only reads connections, which the control plane manages.';

comment on policy "Commands act in the request's organization" on app.customers is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only customers of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the invoicing commands and triggers that read customers as svc_owner (issuing, the billing and company customer checks) stay in the caller''s organization even with a wrong WHERE, while svc-admin manages every organization''s customers.';

comment on policy "Commands act in the request's organization" on app.integration_connections is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only integration connections of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So the readiness check, the hidden-reason lookup, issuing and voiding, which read connections as svc_owner (the ones svc_api''s policy hides too), stay in the caller''s organization, while the control plane and the worker''s accounting sync write them.';

comment on policy "Commands act in the request's organization" on app.invoice_lines is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice lines of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of lines inside a request (issuing''s check that lines exist, the totals'' sums, the currency guard) stay in the caller''s organization even with a wrong WHERE.';

comment on policy "Commands act in the request's organization" on app.invoices is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoices of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So issuing, voiding, the PDF, the totals and the payments'' updates, written as svc_owner because svc_api may not write statuses, numbers, totals or amount_paid, stay in the caller''s organization even with a wrong WHERE, while the worker''s accounting sync and svc-admin''s sync retry span organizations.';

comment on policy "Commands act in the request's organization" on app.payments is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only payments of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So whatever svc_owner reads of payments inside a request stays in the caller''s organization even with a wrong WHERE; a payment itself is never changed or deleted (tg_payments__immutable).';

comment on policy "Commands act in the request's organization" on app_private.invoice_number_counters is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only invoice number counters of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. tg_invoices__lifecycle advances the counter as svc_owner when an invoice is issued, so a request locks and advances only its own organization''s counter; the row lock serializes issuing per organization and a rollback returns the number, so invoice numbers stay unique and gapless.';

comment on policy "Managers and finance change invoices" on app.invoices is 'svc_api updates an invoice only in the request''s organization and only when the caller holds manager or finance (the spec''s Role matrix for invoices), and cannot move it to another organization (the same check on the new row). Its column grants allow only the draft fields customer_id, currency, issue_date, due_date and memo; tg_invoices__guard refuses any change of an issued invoice (INVOICE_NOT_EDITABLE), and statuses, numbers and totals are written by svc_owner''s commands and triggers.';

comment on policy "Managers and finance delete draft lines" on app.invoice_lines is 'svc_api deletes invoice lines only in the request''s organization and only when the caller holds manager or finance: this is how app_private.invoice_set_lines replaces a draft''s lines, since svc_api may not update a line. The draft condition of the name is enforced by the _100_compute trigger (tg_invoice_lines__compute), which refuses a line change on an issued invoice with INVOICE_NOT_EDITABLE.';

comment on policy "Managers and finance read invoices" on app.invoices is 'svc_api reads invoices, and api.invoices shows them, only in the request''s organization and only when the caller holds manager or finance: member and hr have no access to invoices (spec Role matrix), and the policy keeps that fence in the database whatever a command forgets to check.';

comment on policy "Managers and finance read lines" on app.invoice_lines is 'svc_api reads invoice lines, shown with their invoice in api.invoices, only in the request''s organization and only when the caller holds manager or finance, the Roles that may read invoices (spec Role matrix).';

comment on policy "Managers and finance read payments" on app.payments is 'svc_api reads payments only in the request''s organization and only when the caller holds manager or finance: payments share the invoices'' Role fence (spec Role matrix; member and hr have no access).';

comment on policy "Managers and finance record payments" on app.payments is 'svc_api inserts a payment only in the request''s organization and only when the caller holds manager or finance (api.payment_create). Payments are records: there is no update or delete policy, tg_payments__immutable refuses both, and the _100_apply trigger checks each payment against its invoice.';

comment on policy "Managers and finance write invoices" on app.invoices is 'svc_api creates invoices only in the request''s organization and only when the caller holds manager or finance (api.invoice_create). Its column grants take only the customer, currency, dates, memo and creating client, and tg_invoices__guard makes every new invoice an empty draft without a number, whatever the insert says: totals and numbers are the service''s.';

comment on policy "Managers and finance write lines" on app.invoice_lines is 'svc_api inserts invoice lines only in the request''s organization and only when the caller holds manager or finance (app_private.invoice_set_lines). Its column grants leave out amount and tax_amount, which tg_invoice_lines__compute calculates, and that trigger accepts lines on drafts only (INVOICE_NOT_EDITABLE).';

comment on function app_private.tg_integration_connections__emit() is 'After update on app.integration_connections (_950_emit_event): emits integration_connection.updated into the outbox, in the writer''s transaction, when the version moved and the connection is organization-owned; a personal connection is never visible to API Clients, so its changes emit nothing. Raises nothing.';

comment on function app_private.tg_invoice_lines__compute() is 'Before insert, update or delete on app.invoice_lines (_100_compute): a line''s amount is round(quantity * unit_price) and its tax_amount round(amount * tax_rate / 100), both at the currency''s minor units, computed by the database and never taken from the writer, and a unit_price with more decimals than the currency has is refused (SVV22 INVALID_INVOICE_LINE). Lines change only on a draft and never move to another invoice (SVC09 INVOICE_NOT_EDITABLE), the invoice being looked up within the line''s organization (SVN04 INVOICE_NOT_FOUND).';

comment on function app_private.tg_invoice_lines__totals_changed() is 'After each insert, update or delete statement on app.invoice_lines (_900_totals_inserted, _900_totals_updated, _900_totals_deleted): collects the (organization, invoice) pairs of the changed lines from the transition tables and has app_private.invoice_recompute_totals set their totals, once per statement rather than once per line. Raises nothing itself.';

comment on function app_private.tg_invoices__emit() is 'After insert or update on app.invoices (_950_emit_event): emits into the outbox, in the writer''s transaction, invoice.created for a new invoice and, when the version or status moved, invoice.sent, invoice.paid or invoice.voided for those status changes, else invoice.updated. Raises nothing.';

comment on function app_private.tg_invoices__guard() is 'Before insert, update or delete on app.invoices (_050_guard), for every writer: only a draft is deleted and an issued invoice''s customer, currency, dates, memo and totals never change (SVC09 INVOICE_NOT_EDITABLE); a new invoice is an empty draft without a number (SVV22 VALIDATION_FAILED otherwise) whose totals, payments, sending, PDF and sync fields are reset and whose creating client is the request''s when there is one. It also sets the scale from the currency''s minor units, requires a billing customer of the invoice''s organization, and refuses a currency change once the invoice has lines (SVV22 VALIDATION_FAILED), since their amounts are rounded to the old currency.';

comment on function app_private.tg_invoices__lifecycle() is 'Before update on app.invoices (_060_lifecycle), for every writer: the only status moves are draft to sent, sent to paid and sent to void (never back to draft); a void has no payments and no sync in flight, and issuing needs a customer that is not deleted, lines, a positive total and a due date not before the issue date (SVC09 WORKFLOW_BLOCKED), and a ready accounting connection when the organization requires one (SVC09 ACCOUNTING_CONNECTION_NOT_READY). Issuing takes the organization''s next gapless number from app_private.invoice_number_counters, sets sent_at, the issue date (today in the organization''s time zone) and due date (payment terms) when missing, and marks the accounting sync pending when a connection is ready; what issuing fixed (number, sent_at, PDF) never changes, and a draft has no number, PDF or sync (SVC09 INVOICE_NOT_EDITABLE).';

comment on function app_private.tg_invoices__pdf_required() is 'Deferred constraint trigger after update on app.invoices (_990_pdf_required), when an invoice leaves draft: at commit the invoice must have its PDF (pdf_file_id), else SVC09 WORKFLOW_BLOCKED. "PDF generated" is part of issuing in the spec, and checking at commit lets the PDF be made after the number is known, in the same transaction.';

comment on function app_private.tg_invoices__queue_sync() is 'After update on app.invoices (_900_queue_sync): when sync_status becomes pending (issuing with a ready accounting connection, or voiding a synchronized invoice), queues the accounting_sync job (export, or void for a void invoice; one job key per invoice) through app_private.queue_job in the same transaction, so the job exists exactly when the write commits. Raises nothing itself.';

comment on function app_private.tg_invoices__touch() is 'Before update on app.invoices (_100_touch_version): sets updated_at and moves the version once per transaction, so whatever one command writes (fields, lines, totals, a payment, a status) is one new version (ETag), and a second write of the row in the same transaction keeps it. Raises nothing; runs as the writer (it touches only the row).';

comment on function app_private.tg_payments__apply() is 'Before insert on app.payments (_100_apply): locks the invoice by id and the payment''s organization (another organization''s invoice is simply SVN04 INVOICE_NOT_FOUND, leaking nothing), requires it to be issued and unvoided (SVC09 INVOICE_NOT_EDITABLE), in the same currency (SVV22 CURRENCY_MISMATCH), with no more decimals than the currency has (SVV22 VALIDATION_FAILED) and not above the amount due (SVV22 PAYMENT_EXCEEDS_AMOUNT_DUE), then adds it to amount_paid and marks the invoice paid when nothing is due. The row lock means concurrent payments can never take the amount due below zero; it is svc_owner''s definer because the payment''s writer (svc_api) may not write amount_paid or status, and it records the request''s client as the payment''s creator.';

comment on function app_private.tg_payments__emit() is 'After insert on app.payments (_950_emit_event): emits payment.created into the outbox in the writer''s transaction, with version 1, since a payment never changes. Raises nothing.';

comment on function app_private.tg_payments__immutable() is 'Before update or delete on app.payments (_050_immutable): always refuses with SVC09 CONFLICT, whoever writes: payments are financial records of money received and are never changed or deleted.';

comment on function api.service_outbox_status() is 'The outbox gauges of /metrics over every organization: the age in seconds of the oldest event waiting for its fan-out, the number of deliveries waiting, and how long the most overdue due delivery has waited (a retry scheduled for later is not lag). It runs as svc_status, which owns nothing else and by its two policies and column grants sees, of every organization, only the waiting events'' creation times and the waiting deliveries'' status and due time; svc_runtime calls it without a request context and gets these three numbers alone.';

comment on function api.webhook_delivery_get(text,text) is 'getWebhookDelivery: one delivery of endpoint p_endpoint with all its attempts, read through api.webhook_deliveries and app.webhook_delivery_attempts under svc_api''s policies, which show only the request''s client''s own deliveries and attempts in its organization; no row when the delivery is not the caller''s or not that endpoint''s (the server answers WEBHOOK_DELIVERY_NOT_FOUND). It runs as svc_api because svc_runtime holds no privilege on the tables.';

comment on function api.webhook_delivery_replay(text,text) is 'replayWebhookDelivery: a new delivery of the same event to the same endpoint (replay_of names the original), its webhook_deliver job queued, for the caller''s own endpoint (else WEBHOOK_ENDPOINT_NOT_FOUND) and a delivery of it (else WEBHOOK_DELIVERY_NOT_FOUND), only inside the 30-day event retention (SVC09 WEBHOOK_REPLAY_EXPIRED) and while the endpoint is enabled (SVC09 CONFLICT). It runs as svc_owner because svc_api may not write deliveries or queue jobs, so it checks the endpoint''s organization and client against the request context itself, and svc_owner''s policy keeps it in the request''s organization.';

comment on function api.webhook_endpoint_create(text,text,text[],text,text) is 'createWebhookEndpoint: inserts the endpoint for the request''s client with the id the server chose before the verification challenge (which names it), a secret the server sealed and a URL it checked as safe; the table''s triggers check the event names (WEBHOOK_EVENT_NOT_SUPPORTED) and the limit of 20 endpoints per client. It runs as svc_api under "Clients create their own endpoints": the organization and client come from the request context, never from the caller.';

comment on function api.webhook_endpoint_rotate(text,text,integer) is 'rotateWebhookEndpointSecret: stores the new sealed secret; with p_previous_expires_in_seconds > 0 the previous secret keeps signing deliveries until then, so receivers can switch without a gap, otherwise it is dropped at once. It runs as svc_api: app_private.webhook_endpoint_lock finds only the request''s client''s own endpoints (else WEBHOOK_ENDPOINT_NOT_FOUND), and the update passes "Clients change their own endpoints".';

comment on function api.webhook_endpoint_set_status(text,text,boolean) is 'disableWebhookEndpoint and enableWebhookEndpoint: sets the status, clears the failure streak and records a client''s disabling (disabled_reason client); an unchanged status writes nothing (no new version). Enabling a disabled endpoint needs p_verified (the server ran the verification challenge before this transaction), and one disabled meanwhile is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise).';

comment on function api.webhook_endpoint_test(text) is 'testWebhookEndpoint: a webhook_endpoint.test event aimed at this endpoint alone (its client in client_ids, so that the client may read it) and a delivery of it, its job queued; it goes to a disabled endpoint too, since testing is how a client checks a fix. It runs as svc_owner because svc_api may write neither events nor deliveries, and takes only the request''s client''s own endpoint in the request''s organization (else WEBHOOK_ENDPOINT_NOT_FOUND).';

comment on function api.webhook_endpoint_update(text,integer[],jsonb,text) is 'updateWebhookEndpoint: changes url, events and description as p_patch gives them, after If-Match (SVS12 STALE_RESOURCE); p_verified_url is the URL whose verification challenge the server ran before this transaction, and a new URL other than it (the endpoint changed meanwhile) is refused as a retryable SVC09 CONFLICT. It runs as svc_api, on the request''s client''s own endpoint only (webhook_endpoint_lock and "Clients change their own endpoints"; WEBHOOK_ENDPOINT_NOT_FOUND otherwise); the event names are checked by tg_webhook_endpoints__check_events.';

comment on function app_private.emit_event(text,text,text,text,integer,text) is 'Writes one event into the outbox (app.events) in the writer''s transaction, so a rolled-back change emits nothing and a committed one is never lost; marks it fanout_pending when an enabled endpoint of the organization subscribes to it (or it targets one endpoint) and then wakes the fan-out: pg_notify on svc_webhook_fanout with no payload, delivered at commit and folded per transaction (LISTEN needs no privilege, so a payload would tell any role who is active), or, inside an API request (svc.fanout_wake), by setting it to due for the API to wake the fan-out after its commit. It is svc_owner''s definer because the triggers of svc_api''s writes call it and neither svc_api nor svc_runtime may write events; the organization is the changed row''s, and svc_owner''s policy refuses any other inside a request.';

comment on function app_private.event_resource_visible(text,text,text) is 'Whether the request context''s client may read an event''s resource now, read through the API''s own view functions (payments and ticket messages by their policies) under svc_api''s policies, so that a delivery never tells a client more than a GET would (spec: events are filtered through the same rules as reads); a time_entry.deleted event goes to whoever may read time entries, and an unknown resource type is never visible. The worker calls it through app_private.client_may_read, after setting that client''s signed delivery context and switching to svc_runtime; it runs as svc_api, the owner of the views, and sees only the organization the context names.';

comment on policy "Clients change their own endpoints" on app.webhook_endpoints is 'svc_api updates only endpoints of the request''s organization whose client is the request''s client, and cannot hand one to another client or organization (the same check on the new row): a client manages only its own endpoints (spec). Its column grants leave out id, client and organization, and there is no delete policy: endpoints are disabled, never removed, since their deliveries are history.';

comment on policy "Clients create their own endpoints" on app.webhook_endpoints is 'svc_api inserts an endpoint only in the request''s organization and for the request''s client: a client creates endpoints for itself alone (spec), whatever client_id an insert names. The table''s triggers check the event names and the limit of 20 endpoints per client.';

comment on policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts is 'svc_api reads delivery attempts of the request''s organization made for the request''s client: each attempt carries its delivery''s client, copied by the _010_client_of_parent trigger, so the policy judges the row alone (Citus refuses a policy that reads another table). Only the worker writes attempts.';

comment on policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries is 'svc_api reads deliveries of the request''s organization whose client is the request''s client: each delivery carries its endpoint''s client (set by the fan-out, a replay and a test), so a client sees only deliveries to its own endpoints. svc_api never writes deliveries: svc_owner''s commands and the worker do.';

comment on policy "Clients see their own endpoints" on app.webhook_endpoints is 'svc_api reads only the endpoints of the request''s organization that belong to the request''s client (spec: a client sees and manages only its own endpoints); another client''s endpoint is WEBHOOK_ENDPOINT_NOT_FOUND.';

comment on policy "Commands act in the request's organization" on app.events is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only events of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So emit_event and the test event, which write the outbox as svc_owner inside a request, stay in the caller''s organization, while the worker''s fan-out, claims, recovery and purge span organizations.';

comment on policy "Commands act in the request's organization" on app.webhook_deliveries is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook deliveries of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So a replay or a test delivery, written as svc_owner inside a request, stays in the caller''s organization, while the worker''s fan-out, claims, retries, recovery and purge span organizations.';

comment on policy "Commands act in the request's organization" on app.webhook_delivery_attempts is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook delivery attempts of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker records the attempts of every organization''s deliveries; svc_owner inside a request sees only its own organization''s.';

comment on policy "Commands act in the request's organization" on app.webhook_endpoints is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only webhook endpoints of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. So svc_owner''s reads of endpoints inside a request (replay, test, the limit''s count, emit_event''s subscription check) stay in the caller''s organization, while the worker''s fan-out and automatic disabling span organizations.';

comment on policy "Commands act in the request's organization" on app_private.admin_notifications is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only administrators'' notifications of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. The worker writes one when it disables an endpoint after repeated failed deliveries (webhook_record_attempt) and svc-admin lists them (control.notifications_list), both operator sessions; svc_owner inside a request sees only its own organization''s.';

comment on policy "Commands act in the request's organization" on app_private.job_outbox is 'svc_owner (the commands, triggers and helpers that write what svc_api may not), svc_worker and svc_admin read and write, by every command, only queued jobs of the request''s organization (app.current_organization_id(), from the signed context; nothing without one), or of every organization in an operator session (a login that is a member of svc_operator: the worker, svc-admin, migrations), whose jobs span organizations. On Citus app_private.queue_job writes a job into its organization''s outbox in the transaction of the write that caused it, and the worker''s app_private.job_outbox_drain moves every organization''s into graphile-worker''s queue; empty on one server.';

comment on policy "Events are visible through the client's deliveries" on app.events is 'svc_api reads an event of the request''s organization only when the request''s client is in its client_ids, the clients it was delivered to (set by the fan-out''s closing update and by a test event), so a delivery shows its event while a client cannot read the organization''s outbox. Events are written only by svc_owner''s triggers and commands and by the worker.';

comment on policy "The service status sees deliveries waiting" on app.webhook_deliveries is 'svc_status, the owner of api.service_outbox_status, reads of every organization only the deliveries whose status is pending, and of them only status and next_attempt_at (its column grants): what the /metrics gauges count, with no request context.';

comment on policy "The service status sees events waiting for their fan-out" on app.events is 'svc_status, the owner of api.service_outbox_status, reads of every organization only the events still waiting for their fan-out (fanout_pending), and of them only fanout_pending and created_at (its column grants): the age of the outbox''s backlog for /metrics, with no request context.';

comment on function app_private.tg__emit_event() is 'After insert or update on app.projects, app.tasks, app.time_entries and app.approvals (_950_emit_event, the argument naming the resource): emits <resource>.created or, when the version moved, <resource>.updated, or the more precise project.archived/restored, task.archived/restored/transitioned and time_entry.deleted/submitted/approved/rejected, through app_private.emit_event in the writer''s transaction. svc_owner''s definer because the writers may not write events; raises nothing.';

comment on function app_private.tg_webhook_deliveries__replay_of() is 'On app.webhook_deliveries, in place of a self-referencing foreign key Citus cannot keep: before an insert or an update of replay_of that names one (_010_replay_of), the replayed delivery must exist in the same organization (SVN04 WEBHOOK_DELIVERY_NOT_FOUND); after a delete (_990_replay_of), the purged delivery''s replays forget it (replay_of set to null).';

comment on function app_private.tg_webhook_endpoints__check_events() is 'Before insert or an update of events on app.webhook_endpoints (_200_check_events), for every writer: each subscribed name must be a subscribable event of the catalogue (app_private.event_types), else SVV22 WEBHOOK_EVENT_NOT_SUPPORTED with a pointer to each bad entry (the spec rejects unknown event names); the list is then stored sorted without duplicates.';

comment on function app_private.tg_webhook_endpoints__limit() is 'Before insert on app.webhook_endpoints (_300_limit): a client has at most 20 endpoints, disabled ones included, so the fan-out cost of an event stays bounded; a 21st is refused with SVC09 CONFLICT. Creations are serialized per client by a transaction-scoped advisory lock, so two concurrent ones cannot both pass the count.';

comment on function api.file_archive(text) is 'archiveFile: archives a ready file for a writer of its linked resource (invoice: manager or finance; project, task, ticket: manager), through app_private.file_for (SVN04 FILE_NOT_FOUND, SVR04 FILE_ACCESS_DENIED); a processing or rejected file is refused (SVC09 CONFLICT), an archived one is answered as it is, and retention, legal holds and posted invoices are the triggers'' to refuse (RETENTION_BLOCKED). It runs as svc_api because svc_runtime holds no privilege on app.files; its update names the request''s organization and passes svc_api''s policy "Writers of the linked resource change files".';

comment on function api.file_chunks(text,integer,integer) is 'The bytes of a download: chunks p_from..p_to of a file, only when api.files shows it ready to the caller (its Roles for the linked resource); an uploaded file''s chunks come from its upload, a file the service made (an invoice PDF) is one chunk 0, its stored content. It runs as svc_api because svc_runtime may not read app.file_chunks or app.file_contents; every statement names the context''s organization (a download link''s client context, opened by api.file_download_begin), and the chunk and content policies apply inside it.';

comment on function api.file_download_begin(text) is 'The start of a GET of a download link, which is its own credential: it checks the link''s signature (app_private.download_link, which takes the signature''s SHA-256, never the signature), its expiry and its client''s standing (app_private.begin_delivery_context, which then sets that client''s signed context), and answers the file''s metadata only if that client may still read it (api.files) and it is ready; otherwise not_found, expired or client_inactive. It runs as svc_gate because no request context exists yet: the gate''s policies show only the organization the verified link names (svc.gate_organization, this function''s own setting, restored on return) and then the files of the context the link opened, so a wrong WHERE reads nothing of another organization; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

comment on function api.file_download_create(text,integer) is 'createFileDownload: for a file the caller may read (app_private.file_for), a short-lived bearer token binding the file, its organization, the calling client and the expiry under an HMAC (app_private.capability_mac, purpose download), stored nowhere; a rejected file is refused with SVC09 FILE_SCAN_FAILED, a processing or archived one with SVC09 CONFLICT. It runs as svc_api, whose policies confine the read to the request''s organization and the Roles that read the linked resource; svc_runtime can neither read app.files nor the key the token is signed with.';

comment on function api.file_get(text) is 'getFile: the file''s document from api.files, after app_private.file_for has answered SVN04 FILE_NOT_FOUND when neither the file nor its linked resource is visible to the caller, and SVR04 FILE_ACCESS_DENIED when the resource is visible but its files are not for the caller''s Roles (the spec: files inherit access from the linked resource). It runs as svc_api because svc_runtime holds no privilege on app.files; svc_api''s policies show only the request''s organization.';

comment on function api.file_upload_begin(text) is 'The start of the PUT to an upload link, which is its own credential: the token must carry the upload id and organization with a valid HMAC (compared by the signature''s SHA-256, so the statement never carries the credential); the upload is locked FOR UPDATE NOWAIT (a concurrent PUT gets 55P03, 409 CONFLICT) and answers used unless pending, expired once past expires_at, client_inactive unless its creating client is in good standing, and otherwise sets that client''s signed context for the chunks that follow. It runs as svc_gate because no request context exists yet: only after the signature holds does it set svc.gate_organization (its own setting, restored on return), and the gate''s policies show and lock only that organization''s uploads; it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

comment on function api.file_upload_chunks(text,integer,bytea[]) is 'Stores chunks p_first_seq, p_first_seq + 1, … of an upload, several per call and as binary parameters (bytea), in the transaction that api.file_upload_begin opened for the upload''s client. It runs as svc_api because svc_runtime may not write app.file_chunks; the rows take the context''s organization, the policy "Clients write the bytes of their own pending uploads" admits only the uploading client''s rows, and the chunk guard trigger accepts bytes only while the upload is pending and no larger than its chunk size (SVC09 CONFLICT).';

comment on function api.file_upload_chunks(text,integer,text[]) is 'The base64 form of api.file_upload_chunks(text,integer,bytea[]), with the same rules (the context''s organization, the uploading client''s pending upload, its chunk size), kept only for the servers of the previous release during a rolling deploy: base64 text costs a third more memory in the server than the bytes, and a later release drops it. It runs as svc_api because svc_runtime may not write app.file_chunks.';

comment on function api.file_upload_complete(text) is 'completeFileUpload: the calling client''s upload (SVN04 FILE_NOT_FOUND otherwise) becomes a file only if its bytes arrived before expiry (SVC09 UPLOAD_EXPIRED, 410), were uploaded at all (SVC09 CONFLICT), match the declared size and SHA-256 (SVV22 CHECKSUM_MISMATCH) and sniff as the declared content type (SVV22 CONTENT_TYPE_NOT_ALLOWED); the file starts processing with its scan queued (app_private.queue_file_scan), and completing a completed upload answers its file again. It runs as svc_api because svc_runtime may not touch uploads or files; it locks the upload by the request''s organization and svc_api''s policies show only the calling client''s uploads and let only writers of the linked resource add the file.';

comment on function api.file_upload_create(jsonb,integer) is 'createFileUpload: the linked resource must exist in the request''s organization (SVN04 LINKED_RESOURCE_NOT_FOUND), the caller must hold its write Roles (SVR04 FILE_ACCESS_DENIED), and the declared content type and size must fit the organization''s file policy (SVV22 CONTENT_TYPE_NOT_ALLOWED, FILE_TOO_LARGE answering 413); it records a pending upload of the calling client with its expiry and answers it with a capability token (an HMAC over the upload id and organization; nothing secret is stored). It runs as svc_api because svc_runtime may not write app.file_uploads; the row takes the context''s organization and client, which the policy "Writers of the linked resource start uploads" checks again.';

comment on function api.file_upload_finish(text,bigint,text,text,boolean) is 'The end of the PUT to an upload link: records what arrived (size, SHA-256, the content type sniffed from the bytes and whether it fits the declared one) and moves the upload from pending to uploaded, or refuses with SVC09 CONFLICT when it is no longer pending; the lifecycle trigger checks the recorded size against the stored chunks. It runs as svc_api because svc_runtime may not update uploads; the update names the context''s organization and the policy "Clients move their own uploads on" limits it to the link''s client.';

comment on function api.file_upload_get(text) is 'The calling client''s upload as createFileUpload answered it, its capability token derived again (an idempotent replay shows the same URL, which the stored response leaves out); null when there is no such upload of that client. It runs as svc_api because svc_runtime may not read app.file_uploads; the read names the request''s organization and the policy "Clients see their own uploads" shows only that client''s rows.';

comment on function app_private.file_link(text) is 'The resource (type and id) that a file of the request''s organization is linked to, whatever the caller''s Roles: svc_api''s policy hides a file whose linked resource''s files the caller may not read, and app_private.file_for uses this link to answer SVR04 FILE_ACCESS_DENIED (the caller sees the resource but not its files) instead of SVN04 FILE_NOT_FOUND. It runs as svc_owner, whose policy shows the request''s organization without the Role filter; it reads only that organization and returns only the link, never the file.';

comment on function app_private.file_policy(text) is 'An organization''s file policy in force: its row of app.file_policies, or the defaults (100 MiB, the default content types, no scan required). It runs as svc_owner, the owner of the policy helpers, so that createFileUpload, the file lifecycle trigger and the worker''s scan job read the settings under one policy: the request''s organization (every organization only in an operator session), so within a request another organization''s settings are never read.';

comment on function app_private.member_hr_profile(text,text) is 'The HR-restricted fields of a member (employee number, hire date, employment type) for api.members: only when the caller holds the hr Role and the member is of the context''s organization, null otherwise (spec: HR-restricted fields only for hr). It runs as svc_owner because svc_api is not granted these columns; its own checks come first, then it reads the one member of that organization, and it is refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER).';

comment on function app_private.queue_file_scan(text) is 'Queues the file_scan job of a newly completed upload (job key file_scan:<file id>, 10 attempts), through app_private.queue_job, in the writer''s transaction, so the scan is queued only if the file commits. It runs as svc_owner because svc_api may not write graphile-worker''s queue (on Citus the organization''s job outbox); the job names the request''s organization, which the queue''s policy requires (SV500 JOB_WITHOUT_ORGANIZATION without one).';

comment on policy "Chunks are readable where their file is" on app.file_chunks is 'svc_api may SELECT upload chunks of the request''s organization whose linked resource type the context''s Roles read: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager (the spec: files inherit access from the linked resource). The chunk carries its upload''s linked_resource_type (copied by a trigger), so the policy judges the row alone; downloads read chunks only of a ready file that api.files shows.';

comment on policy "Clients move their own uploads on" on app.file_uploads is 'svc_api may UPDATE only uploads of the request''s organization that the request''s client created, and cannot hand one to another client or organization: an upload is its client''s own until it becomes a file. Which moves are legal (pending to uploaded to completed, the declaration fixed) is the lifecycle trigger''s to decide.';

comment on policy "Clients read their organization's file policy" on app.file_policies is 'svc_api may SELECT only the file policy of the request''s organization (size limit, permitted content types, whether a scan is required), which createFileUpload applies and returns with each upload. Any Role may read it; only the control plane writes it.';

comment on policy "Clients see their own uploads" on app.file_uploads is 'svc_api may SELECT only uploads of the request''s organization that the request''s client created: an upload, its capability token and its progress are private to the client that started it until it completes into a file, which then follows its linked resource''s access.';

comment on policy "Clients write the bytes of their own pending uploads" on app.file_chunks is 'svc_api may INSERT chunks only in the request''s organization and only for the request''s client, the upload''s creator that a trigger copies into the row whatever the insert says: a client writes bytes into its own uploads alone. That the upload is still pending and the chunk within its chunk size is the chunk guard trigger''s check.';

comment on policy "Commands act in the request's organization" on app.file_chunks is 'svc_owner, svc_worker and svc_admin may read and write upload chunks of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that guard chunks and check an upload''s received size, and the scan job that reads them and deletes a rejected file''s bytes. A command with a wrong WHERE inside a request still reaches no other organization''s bytes.';

comment on policy "Commands act in the request's organization" on app.file_contents is 'svc_owner, svc_worker and svc_admin may read and write stored file content of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the invoice PDF that api.invoice_attach_pdf stores, and the worker''s reply email, which attaches a stored file. A command with a wrong WHERE inside a request still reaches no other organization''s content.';

comment on policy "Commands act in the request's organization" on app.file_policies is 'svc_owner, svc_worker and svc_admin may read and write file policies of the request''s organization, or of every organization in an operator session: svc-admin sets an organization''s policy (control.file_policy_set), the scan job reads whether a scan is required, and app_private.file_policy reads it inside a request. A command with a wrong WHERE inside a request still reaches no other organization''s row.';

comment on policy "Commands act in the request's organization" on app.file_uploads is 'svc_owner, svc_worker and svc_admin may read and write uploads of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that check uploads against their files and chunks, and the purge of expired uploads. A command with a wrong WHERE inside a request still reaches no other organization''s uploads.';

comment on policy "Commands act in the request's organization" on app.files is 'svc_owner, svc_worker and svc_admin may read and write files of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the service''s own files (invoice PDFs), the scan job''s ready or rejected outcome, legal holds set by svc-admin, and the triggers and helpers that read files. A command with a wrong WHERE inside a request still reaches no other organization''s files.';

comment on policy "File content is readable where the file is" on app.file_contents is 'svc_api may SELECT stored content (files the service made, such as invoice PDFs) of the request''s organization only where the context''s Roles read the file''s linked resource type: invoice files manager or finance, ticket files whoever may read tickets, project and task files member or manager. The content row carries its file''s linked_resource_type (copied by a trigger), so the policy judges the row alone.';

comment on policy "Files are visible where the linked resource is" on app.files is 'svc_api may SELECT files of the request''s organization only where the context''s Roles read the linked resource''s files (the spec: files inherit access from the linked resource): invoice files manager or finance, ticket files whoever may read tickets (app_private.may_read_tickets), project and task files member or manager. A file hidden here answers 404 or 403 through app_private.file_link, by whether the caller sees the resource itself.';

comment on policy "The gate locks uploads a link names" on app.file_uploads is 'svc_gate may lock (UPDATE, which FOR UPDATE requires) only uploads of the organization that a verified upload link names, set in svc.gate_organization by api.file_upload_begin once the link''s signature holds: so the gate serializes PUTs to one upload without a request context and with nothing of another organization in reach. The gate is granted UPDATE of status alone and changes nothing.';

comment on policy "The gate reads files a link opened" on app.files is 'svc_gate may SELECT files only of the organization of the signed client context that a download link opened (api.file_download_begin, after the link''s signature, expiry and client standing are checked): the gate reads a download''s file without a request context of its own and nothing of another organization.';

comment on policy "The gate reads uploads a link names" on app.file_uploads is 'svc_gate may SELECT uploads only of the organization that a verified link names (svc.gate_organization, set once the link''s signature holds) or of the signed client context the link opened: api.file_upload_begin finds the upload and its client before any request context exists, and api.file_download_begin the chunk size of a file''s upload. Nothing of another organization is in reach.';

comment on policy "Writers of the linked resource add uploaded files" on app.files is 'svc_api may INSERT a file only in the request''s organization, only from an upload (upload_id set), and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager), as the spec gives files the linked resource''s write permission. Files the service makes itself (invoice PDFs) come from svc_owner, and the lifecycle trigger checks that the upload''s bytes were verified against its declaration.';

comment on policy "Writers of the linked resource change files" on app.files is 'svc_api may UPDATE files of the request''s organization only when the context holds the write Roles of the file''s linked resource type (invoice: manager or finance; project, task, ticket: manager), and a file cannot leave the organization. Which changes are legal (ready to archived only; content and identity never change; retained files kept) is decided by the lifecycle and retention triggers.';

comment on policy "Writers of the linked resource start uploads" on app.file_uploads is 'svc_api may INSERT an upload only in the request''s organization, recorded as the request''s client''s, and only when the context holds the write Roles of the linked resource type (invoice: manager or finance; project, task, ticket: manager): the spec lets only writers of the linked resource upload to it.';

comment on function app_private.tg_file_bytes__of_parent() is 'BEFORE INSERT trigger on app.file_chunks and app.file_contents: copies from the parent row, whatever the insert said, the linked resource type (of the chunk''s upload, or of the content''s file) and, for a chunk, the upload''s creating client. The row policies on the bytes then judge the row alone (on Citus a policy may not read another table), and the copy stays true because bytes never change parent; it runs as svc_owner to read the parent past the caller''s policies, by the row''s own organization.';

comment on function app_private.tg_file_chunks__guard() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_chunks: bytes are accepted only while their upload is pending and each chunk is at most the upload''s chunk size, never change, and are deleted only with an upload that made no file or from a rejected file (the purge of infected content); each refusal is SVC09 CONFLICT. It holds for every writer, so a file''s bytes are exactly those that were verified.';

comment on function app_private.tg_file_contents__check() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_contents: stored content is only inserted, never changed or deleted (SVC09 CONFLICT), and must match its file''s recorded size and SHA-256 (SVV22 VALIDATION_FAILED), so a file''s record always describes its content. It runs as svc_owner to read the file row by the content''s own organization.';

comment on function app_private.tg_file_uploads__lifecycle() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.file_uploads: an upload starts pending and moves only pending, uploaded, completed; its declaration (name, type, size, checksum, linked resource, chunk size, client, expiry) never changes, what was received is recorded once and must equal the bytes its chunks hold, it completes only with a file and verified bytes matching the declaration, and once it made a file it is never deleted. Every refusal is SVC09 CONFLICT, for every writer.';

comment on function app_private.tg_files__emit() is 'AFTER UPDATE trigger on app.files: when a file''s status changes to ready, rejected or archived it writes the file.ready, file.rejected or file.archived event to the outbox (app_private.emit_event) in the writer''s transaction, so subscribers hear of it only if the change commits. It runs as svc_owner because svc_api, which archives files within a request, may only read app.events.';

comment on function app_private.tg_files__lifecycle() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.files: an uploaded file starts processing and only from an uploaded upload whose verified bytes match its declaration, a file the service made starts ready; a file moves processing to ready (scanned clean, or not scanned where the organization''s file policy requires no scan) or rejected, and ready to archived; files are archived, not deleted (only rejected ones go), their content and identity never change and their checks are recorded once (SVC09 CONFLICT). Archiving is refused for a posted financial record, a file under legal hold or one attached to a posted invoice (SVC09 RETENTION_BLOCKED).';

comment on function app_private.tg_files__retention() is 'BEFORE UPDATE or DELETE trigger on app.files, first of its triggers: a file under retention (a posted financial record, such as an issued invoice''s PDF) is never archived (SVC09 RETENTION_BLOCKED), deleted, or changed in anything but its legal hold (SVC09 CONFLICT). It reads only the row, so it runs as the writer.';

comment on function api.require_tickets(boolean) is 'The reason a ticket request is refused before anything is read: the organization''s ticket module is off (SVR04 TICKET_MODULE_DISABLED); a write without the manager Role (SVR03 ROLE_REQUIRED); a read without the right to read tickets (member or manager, finance or hr only where the organization grants them tickets; SVR03 ROLE_REQUIRED), as the spec''s Role matrix sets. It runs as svc_api because svc_runtime may not read app.organizations; it reads only the request''s organization.';

comment on function api.ticket_create(jsonb) is 'createTicket (manager, checked by api.require_tickets): a ticket of the request''s organization in its workflow''s initial status, priority normal unless given, the requester''s email and the tags trimmed and lower-cased (tags once each), recorded as the calling client''s; its number and the workflow are the rules trigger''s. It runs as svc_api because svc_runtime may not write app.tickets; the row takes the context''s organization and client, which the policy "Managers create tickets" checks again.';

comment on function api.ticket_get(text) is 'getTicket: the ticket''s document and version (its ETag) from api.tickets, after api.require_tickets(false) has refused a disabled module or a caller who may not read tickets; no row when the ticket is not visible. It runs as svc_api because svc_runtime may not read the ticket tables; svc_api''s policies show only the request''s organization''s tickets, and only to ticket readers.';

comment on function api.ticket_message_create(text,jsonb) is 'createTicketMessage (manager): locks the ticket (SVN04 TICKET_NOT_FOUND), requires every attachment to be a ready file linked to this ticket that the caller may read (SVV22 ATTACHMENT_NOT_AVAILABLE), and records the reply or internal note with the calling client as its author, as the spec asks; a reply is then emailed to the requester by the worker. It runs as svc_api because svc_runtime may not write app.ticket_messages; the message takes the locked ticket''s organization and passes the policy "Managers add messages".';

comment on function api.ticket_require(text) is 'Answers SVN04 TICKET_NOT_FOUND unless the ticket exists in the request''s organization and the caller may see it, so that listTicketMessages tells a missing ticket from one without messages. It runs as svc_api because svc_runtime may not read app.tickets; the read names the request''s organization and the ticket readers'' policy applies.';

comment on function api.ticket_search_ids(text) is 'The ids of the request''s organization''s tickets that match a web-search query, for listTickets'' search: the public document (subject, description, replies) for whoever may read tickets, the internal-note document only for those who may read internal notes (member, manager), so a reader who may not see notes cannot find a ticket by them. It runs as svc_owner, whose policy on app.ticket_search shows only the request''s organization; it names that organization and applies the reader checks itself, and returns only ids, which api.tickets filters again by its policies (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER).';

comment on function api.ticket_transition(text,text,text) is 'transitionTicket (manager): locks the ticket and applies the named transition only where the organization''s workflow offers it from the current status (SVV23 INVALID_TRANSITION); a transition that requires a resolution needs a non-blank one and the others take none (SVV22 VALIDATION_FAILED); closing keeps the resolution, other transitions without one clear it. It runs as svc_api because svc_runtime may not write app.tickets; the update names the ticket''s organization, passes "Managers change tickets", and the rules trigger checks the move again.';

comment on function api.ticket_update(text,integer[],jsonb) is 'updateTicket (manager): a status in the patch is refused (SVV23 INVALID_TRANSITION: status changes only through transitions), If-Match must name the current version (SVS12 STALE_RESOURCE), and only subject, description, priority, tags, assignee and project change (SVV22 IMMUTABLE_FIELD); the assignee and project are checked by the rules trigger. It runs as svc_api because svc_runtime may not write app.tickets; the locked ticket and the update name the request''s organization and pass "Managers change tickets".';

comment on function app_private.may_read_tickets() is 'Whether the caller may read tickets: the ticket module on, and the member or manager Role, or finance or hr where the organization grants them tickets (the spec''s Role matrix). In a request it is the tickets read flag signed into the context by begin_request; without one (a BI session) it reads the organization''s ticket settings (refused on a Citus coordinator, SV500 NOT_IN_ITS_WORKER), and without an organization it is false. It runs as svc_owner, the owner of the policy helpers, whose policy shows only the context''s organization, and it reads no other.';

comment on policy "Clients see their organization's ticket transitions" on app.ticket_transitions is 'svc_api may SELECT only the ticket workflow transitions of the request''s organization, which each ticket lists as the transitions offered from its status and transitionTicket applies. Each organization has its own workflow; no client writes it.';

comment on policy "Clients see their organization's ticket workflow" on app.ticket_statuses is 'svc_api may SELECT only the ticket statuses of the request''s organization (its workflow: categories and the initial status), which createTicket and the ticket documents use. Each organization has its own workflow; no client writes it.';

comment on policy "Commands act in the request's organization" on app.ticket_messages is 'svc_owner, svc_worker and svc_admin may read and write ticket messages of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers that index and emit messages and the worker''s reply email, which records a reply''s delivery. A command with a wrong WHERE inside a request still reaches no other organization''s messages.';

comment on policy "Commands act in the request's organization" on app.ticket_search is 'svc_owner, svc_worker and svc_admin may read and write ticket search documents of the request''s organization, or of every organization in an operator session: the triggers that keep the public and internal-note documents and api.ticket_search_ids, which searches them. A command with a wrong WHERE inside a request still reaches no other organization''s documents.';

comment on policy "Commands act in the request's organization" on app.ticket_statuses is 'svc_owner, svc_worker and svc_admin may read and write ticket statuses of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a ticket''s status. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';

comment on policy "Commands act in the request's organization" on app.ticket_transitions is 'svc_owner, svc_worker and svc_admin may read and write ticket transitions of the request''s organization, or of every organization in an operator session: the default workflow seeded when svc-admin creates an organization, and the rules trigger that checks a status change. A command with a wrong WHERE inside a request still reaches no other organization''s workflow.';

comment on policy "Commands act in the request's organization" on app.tickets is 'svc_owner, svc_worker and svc_admin may read and write tickets of the request''s organization, or of every organization in an operator session (the worker, svc-admin, migrations): the triggers and helpers that check, index and emit tickets, and the worker''s reply email, which reads the ticket it answers. A command with a wrong WHERE inside a request still reaches no other organization''s tickets.';

comment on policy "Commands act in the request's organization" on app_private.ticket_number_counters is 'svc_owner, svc_worker and svc_admin may read and advance the ticket number counter of the request''s organization, or of every organization in an operator session: the rules trigger takes each new ticket''s number from its organization''s row, which also serializes numbering per organization. A trigger with a wrong WHERE inside a request still advances no other organization''s counter.';

comment on policy "Managers add messages" on app.ticket_messages is 'svc_api may INSERT a ticket message only in the request''s organization, authored by the request''s client, when the context holds the manager Role and may read tickets (the module on): the spec gives replies and notes to managers and records the client as author.';

comment on policy "Managers change tickets" on app.tickets is 'svc_api may UPDATE tickets of the request''s organization only when the context holds the manager Role and may read tickets (the module on), and a ticket cannot leave the organization: the spec gives updates, assignment and transitions to managers. Which changes are legal is the rules trigger''s to decide.';

comment on policy "Managers create tickets" on app.tickets is 'svc_api may INSERT a ticket only in the request''s organization, recorded as the request''s client''s, when the context holds the manager Role and may read tickets (the module on): the spec gives createTicket to managers.';

comment on policy "Search follows the tickets" on app.ticket_search is 'svc_api may SELECT search documents of the request''s organization only when the context may read tickets, as for the tickets themselves: the search documents hold ticket text, and no one who cannot read tickets may query it.';

comment on policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages is 'svc_api may SELECT messages of the request''s organization only when the context may read tickets, and internal notes only when it also holds the member or manager Role (app_private.may_read_internal_notes): finance and hr, where the organization lets them read tickets, see replies alone.';

comment on policy "Ticket readers see their organization's tickets" on app.tickets is 'svc_api may SELECT tickets of the request''s organization only when the context may read tickets (app_private.may_read_tickets): the module on, and member or manager, or finance or hr where the organization grants them tickets, as the spec''s Role matrix sets.';

comment on function app_private.tg_organizations__seed_ticket_workflow() is 'AFTER INSERT trigger on app.organizations: seeds the new organization''s default ticket workflow (statuses new, open, pending, on_hold, solved, closed, new the initial one; the transitions between them, resolve requiring a resolution), so that every organization can create tickets from the start. It runs as svc_owner, which writes the workflow tables of the organization being created.';

comment on function app_private.tg_ticket_messages__emit() is 'AFTER INSERT trigger on app.ticket_messages: writes the ticket.message.created event to the outbox and, for a reply, queues the ticket_reply_email job (job key ticket_reply:<message id>, 10 attempts) in the writer''s transaction, so a reply is emailed only if it commits; internal notes never leave. It runs as svc_owner because svc_api may not write app.events or the job queue; both name the message''s organization.';

comment on function app_private.tg_ticket_messages__index() is 'AFTER INSERT trigger on app.ticket_messages: adds the message''s text to its ticket''s search document, a reply to the public document and an internal note to the internal-note document, kept apart so that a reader who may not see notes cannot find tickets by them. It runs as svc_owner because svc_api may only read app.ticket_search.';

comment on function app_private.tg_ticket_messages__rules() is 'BEFORE INSERT, UPDATE or DELETE trigger on app.ticket_messages: a message is never deleted and never changes, except that a queued reply''s delivery is recorded once (SVC09 CONFLICT); its attachments must be ready files linked to its ticket (SVV22 ATTACHMENT_NOT_AVAILABLE), and a new reply starts with its delivery queued, a note with none. It holds for every writer; it runs as svc_owner so that the attachment check reads the ticket''s files past the writer''s Role policies, in the message''s own organization.';

comment on function app_private.tg_tickets__emit() is 'AFTER INSERT or UPDATE trigger on app.tickets: writes ticket.created, or on an update that advanced the version ticket.transitioned when the status changed and ticket.updated otherwise, to the outbox in the writer''s transaction, so subscribers hear of a change only if it commits. It runs as svc_owner because svc_api may not write app.events.';

comment on function app_private.tg_tickets__index() is 'AFTER INSERT or UPDATE trigger on app.tickets: creates the ticket''s search row (subject weighted above description), and when the subject or description changes rebuilds its public document from them and the ticket''s replies, leaving internal notes in their own document. It runs as svc_owner because svc_api may only read app.ticket_search.';

comment on function app_private.tg_tickets__rules() is 'BEFORE INSERT or UPDATE trigger on app.tickets: a new ticket takes its organization''s next number (TKT-000001…, from app_private.ticket_number_counters, which svc_api may not touch) and must start in the workflow''s initial status (SVV23 INVALID_TRANSITION); number, origin and external_id never change (SVC09 CONFLICT), a status changes only along a transition of the workflow and the resolution only with one (SVV23), and a move to a solved status needs a resolution (SVV22 VALIDATION_FAILED) and stamps resolved_at. An assignee must be an active member (SVV22 INVALID_ASSIGNEE) and a project must exist in the organization (SVN04 PROJECT_NOT_FOUND), checked by the row''s own organization.';

comment on function api.agent_blockers(text,text,boolean) is 'Every blocker to the calling API Client starting agent p_id now, sorted in the spec''s order of checks: the agent''s principal type and Roles (all of them), the subject, each required skill''s blockers (app_private.skill_blocker: licence level, Roles, subject, integration connection), and AGENT_UNAVAILABLE for a model agent when no model provider is configured (p_model_available false); an agent the request''s organization does not publish raises SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED (app_private.agent_lookup). It writes nothing: checkAgentReadiness lists the blockers and createAgentRun refuses with the first. It runs as svc_api because svc_runtime may not read the agent and skill catalogue, the publications or the client''s licence level, and svc_api''s policies confine those reads to the request''s signed organization and client.';

comment on function api.agent_get(text) is 'getAgent: the agent as the calling client sees it (api.agents), once app_private.agent_lookup found it published in the request''s organization (SVN04 AGENT_NOT_FOUND, AGENT_NOT_PUBLISHED); SVR04 API_PRINCIPAL_NOT_SUPPORTED when the agent does not accept API Clients, SVR03 ROLE_REQUIRED when the client lacks any of the agent''s required_roles (all are needed). It runs as svc_api because svc_runtime may not read the catalogue or the publications, and svc_api reads them under its policies for the request''s signed organization.';

comment on function api.agent_input_schema(text) is 'The input JSON Schema of agent p_id, which the API validates a run''s input against before checkAgentReadiness and createAgentRun; only for an agent the request''s organization publishes (app_private.agent_lookup: SVN04 AGENT_NOT_FOUND or AGENT_NOT_PUBLISHED), the principal and Role checks following in those commands. It runs as svc_api because the agent catalogue in app_private is not granted to svc_runtime; the publication is read under svc_api''s policy for the request''s signed organization.';

comment on function api.agent_readiness(text,jsonb,jsonb,boolean) is 'checkAgentReadiness, advisory and writing nothing: whether the calling client could start agent p_id, with the blockers of api.agent_blockers, SUBJECT_NOT_SUPPORTED when a subject is named and the agent or one of its subject-dependent skills does not act for one, INVALID_SUBJECT_MEMBER unless the subject is an active member of the request''s organization, the input problems the API found (p_input_blockers), and each skill''s availability. It runs as svc_api because svc_runtime may not read the agent and skill catalogue or the members table; every read names the request''s signed organization and svc_api''s policies confine it there.';

comment on function api.agent_run_create(text,jsonb,jsonb,jsonb,boolean) is 'createAgentRun: refuses with the first blocker of api.agent_blockers (SVV22 SUBJECT_NOT_SUPPORTED, SVR04 LICENSE_LEVEL_REQUIRED, SVR03 ROLE_REQUIRED, otherwise SVC09 with the blocker''s code) or a subject that is not an active member (INVALID_SUBJECT_MEMBER), then inserts a queued run of the agent''s current version for the request''s organization and client and queues its agent_run job. It runs as svc_api because svc_runtime may neither read the catalogue nor insert runs; the policy "Clients start runs" admits only a row of the signed context''s organization and client, and tg_runs__lifecycle only a queued one.';

comment on function api.run_cancel(text) is 'cancelRun, best effort: SVN04 RUN_NOT_FOUND unless the run is the calling client''s; it waits at most 1 s for the run''s row lock, which the worker holds while it applies a tool operation, and answers SVC09 RUN_CANCEL_NOT_AVAILABLE (retry) rather than interrupt an operation half-way, then restores the transaction''s lock_timeout; a finished run answers SVC09 RUN_ALREADY_TERMINAL, any other becomes cancelled, and completed tool operations are not rolled back. It runs as svc_api because svc_runtime may not update runs; the policy "Clients answer and cancel their own runs" and svc_api''s column grants (status, required_action, state, completed_at) confine the update to the client''s own run in the request''s organization.';

comment on function api.run_events_after(text,integer,integer) is 'For streamRunEvents: a run''s events after sequence number p_after, at most p_limit, in order, each flagged when it ends the run (run.completed, run.failed, run.cancelled); SVN04 RUN_NOT_FOUND unless the run is the calling client''s, SVC09 RUN_OUTPUT_EXPIRED once its events are past retention (the run itself remains). It runs as svc_api because svc_runtime may not read app.runs or app.run_events; every read names the request''s organization, and svc_api''s policies show only that organization''s runs and events of the calling client.';

comment on function api.run_get(text) is 'getRun: the run p_id as its client sees it (api.runs), no row for a run of another client or organization. It runs as svc_api, which reads runs and their tool calls under the policies "Clients see their own runs" and "Tool calls are readable with their run", so only the request''s signed organization and client are shown.';

comment on function api.run_submit_action(text,text,jsonb) is 'submitRunAction: locks the calling client''s run (app_private.run_lock, SVN04 RUN_NOT_FOUND), accepts only while it is requires_action (SVC09 RUN_NOT_ACTIONABLE) and only the offered action id with one of the choices its required_action.schema offers (SVV22 RUN_ACTION_INVALID; the API checked the rest of the response), then records the response in the run''s state and queues the run and its job again. As the spec requires, nothing else changes: a response is never a formal approval, an identity assertion or a permission elevation. It runs as svc_api because svc_runtime may not update runs; "Clients answer and cancel their own runs" and svc_api''s column grants confine the update to the client''s own run in the request''s organization.';

comment on function api.run_wake_key() is 'The key (hex) of the svc_run_events notification payloads, read once by each API process''s listener (src/agents/hub.ts) to compute the opaque wake name of the runs it streams: LISTEN needs no privilege, so a payload is the first 128 bits of SHA-256(key || run id), never the run''s id, and no other role of the database learns which runs are active and when. It runs as svc_gate, one of the few roles that may read app_private.run_wake_key (svc_runtime may not); the key is one for the service and names no organization.';

comment on function app_private.agent_lookup(text) is 'The catalogue definition of agent p_id as the request''s organization has it: SVN04 AGENT_NOT_FOUND when there is no such agent or publication row, AGENT_NOT_PUBLISHED when the organization unpublished it, so a client holding the id learns why it went. It runs as svc_api, which may read the catalogue (svc_runtime may not), and reads the publication under "Clients see their organization''s publications": only the request''s signed organization''s, never another''s.';

comment on function app_private.queue_agent_run(text) is 'Queues the agent_run job (at most 3 attempts) of run p_run_id for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s write. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';

comment on function app_private.run_event(text,text,text,jsonb) is 'Appends one event to run p_run_id''s log with the next sequence number (its callers hold the run''s row lock, so the log is totally ordered) and wakes that run''s streams by its opaque name: NOTIFY svc_run_events at commit, or, inside an API request''s transaction (svc.fanout_wake), in svc.run_wake for the API to notify after its commit, since NOTIFY serializes committing transactions. It runs as svc_owner because svc_api may only read app.run_events and may not read the wake key; its insert passes svc_owner''s policy only in the request''s organization or in the worker''s operator session, and the event takes the run''s client (tg__client_of_parent).';

comment on function app_private.run_lock(text) is 'Locks (FOR UPDATE) and returns the calling client''s run p_id in the request''s organization, SVN04 RUN_NOT_FOUND otherwise; cancelRun and submitRunAction take it, so they wait for a tool operation the worker is applying under the same lock. It runs as svc_api, whose policies show only the runs of the request''s signed organization and client, so no other client''s run can be locked or read.';

comment on function app_private.skill_blocker(text,text) is 'Whether the calling client may use skill p_skill now: null, or the first blocker of LICENSE_LEVEL_REQUIRED (a manager-level skill needs a Manager-level licence), ROLE_REQUIRED (any one of the skill''s Roles, as for an operation), SUBJECT_NOT_SUPPORTED and INTEGRATION_CONNECTION_NOT_READY (api.integration_readiness for the skill''s capability). It runs as svc_api, for the api commands and for the worker''s tool calls made under the run''s client''s signed context, because svc_runtime may not read the skill catalogue or the client''s licence level; the client row is read in the request''s organization under svc_api''s policies.';

comment on function skills.tasks_find_attention(jsonb,text) is 'The tasks.find_attention skill: the open tasks of project p_args.project_id that need attention (overdue, blocked, or waiting on an open predecessor) among the tasks the client may read (api.tasks), with their transitions and versions; SVN04 PROJECT_NOT_FOUND for a project the client cannot see. It runs as svc_api because it reads workflow categories and task dependencies, which no api view shows and svc_runtime may not read; the worker calls it as svc_runtime under the run''s client''s signed context, and every read names that organization under svc_api''s policies.';

comment on policy "Clients answer and cancel their own runs" on app.runs is 'svc_api may update only runs of the request''s signed organization that its API Client started, before and after the update, and only the status, required_action, state and completed_at columns granted to it: what submitRunAction and cancelRun change. tg_runs__lifecycle still holds every update to the spec''s run states.';

comment on policy "Clients see their organization's publications" on app.agent_publications is 'svc_api may read the publication status of each agent for the request''s signed organization only, so a client sees and starts only the agents its organization publishes (api.agents, app_private.agent_lookup) and learns AGENT_NOT_PUBLISHED for one it unpublished. Publishing is the control plane''s (svc-admin): svc_api has no write on the table.';

comment on policy "Clients see their own runs" on app.runs is 'svc_api may read only the runs of the request''s signed organization that its API Client started: a run belongs to the client that created it, so another client of the same organization gets RUN_NOT_FOUND. With no valid context it sees nothing.';

comment on policy "Clients start runs" on app.runs is 'svc_api may insert a run only for the request''s signed organization and with the calling API Client as its actor (client_id): a client cannot start a run in another organization or on another client''s behalf. tg_runs__lifecycle requires the new run to be queued.';

comment on policy "Commands act in the request's organization" on app.agent_publications is 'svc_owner, svc_worker and svc_admin, every command: the publications of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So tg_organizations__publish_agents publishes the catalogue for a new organization and svc-admin publishes or unpublishes an agent, while a definer running in a request cannot reach another organization''s publications even with a wrong WHERE.';

comment on policy "Commands act in the request's organization" on app.run_events is 'svc_owner, svc_worker and svc_admin, every command: the run events of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). So app_private.run_event appends to a run''s log from a request (a status change by cancelRun) only in its organization, while the worker''s engine and the retention purge, whose jobs span organizations, reach every run''s log.';

comment on policy "Commands act in the request's organization" on app.run_tool_calls is 'svc_owner, svc_worker and svc_admin, every command: the tool calls of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s app_private.run_tool records each call for audit in the run''s organization; a definer running in a request cannot reach another organization''s calls even with a wrong WHERE.';

comment on policy "Commands act in the request's organization" on app.runs is 'svc_owner, svc_worker and svc_admin, every command: the runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker''s engine (starting, settling and tool calls) and the output retention purge span organizations; svc_owner''s triggers and helpers inside a request stay in its organization even with a wrong WHERE.';

comment on policy "Events are readable with their run" on app.run_events is 'svc_api may read a run event only in the request''s signed organization and only when its client_id is the calling API Client''s: the events of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the event is inserted and never changes, so the policy judges the row alone, without reading app.runs.';

comment on policy "Tool calls are readable with their run" on app.run_tool_calls is 'svc_api may read a tool call (the audit of a run''s tool operations) only in the request''s signed organization and only when its client_id is the calling API Client''s: the calls of the client''s own runs, as "Clients see their own runs" shows the runs. client_id is copied from the run by tg__client_of_parent when the call is inserted, so the policy judges the row alone, without reading app.runs.';

comment on function app_private.tg_agent_definitions__skills_exist() is 'BEFORE INSERT OR UPDATE trigger on app_private.agent_definitions: every skill an agent names, required or optional, must be in the skill catalogue (app_private.agent_skills), which no foreign key can check on an array; otherwise SVC09 CONFLICT. So every skill a run may be offered has a function to execute and the Roles, licence level and capability that app_private.skill_blocker checks.';

comment on function app_private.tg_organizations__publish_agents() is 'AFTER INSERT trigger on app.organizations: a new organization starts with every agent of the catalogue published (app.agent_publications; rows already there are kept). It runs as svc_owner, the owner of every trigger, under its policy: organizations are created in an operator session (svc-admin, migrations), where that policy admits the new organization''s rows.';

comment on function app_private.tg_runs__events() is 'AFTER UPDATE OF status trigger on app.runs: each change to running, requires_action, succeeded, failed or cancelled appends the matching stream event (run.started, run.requires_action with the action, run.completed with the output, run.failed with the error, run.cancelled) through app_private.run_event, and all but run.started also become webhook events (app_private.emit_event, the event''s sequence number as version). It runs as svc_owner because a status change made by svc_api (cancelRun) may not itself write the run log or the outbox; the rows it writes are in the run''s own organization, within svc_owner''s policy.';

comment on function app_private.tg_runs__lifecycle() is 'BEFORE INSERT OR UPDATE trigger on app.runs, for every writer: a run starts queued; its request (organization, id, kind, agent and version, conversation, client, subject, input, metadata, created_at) never changes; its status moves only as the spec''s table allows (queued to running or cancelled, running to succeeded, failed, requires_action or cancelled, requires_action to queued or cancelled). Terminal runs never change (SVC09 RUN_ALREADY_TERMINAL) except the retention purge clearing their output, and only a finished run''s output expires; other violations raise SVC09 CONFLICT.';

comment on function api.report_download_begin(text) is 'The GET of a report download link, before any request context exists: refused on a Citus coordinator (SV500 NOT_IN_ITS_WORKER); not_found unless the link''s signature holds (app_private.download_link), expired past its expiry, client_inactive unless its API Client may still make requests (app_private.begin_delivery_context, which then signs that client''s context); ok only for a succeeded, unexpired run the client may read now (api.report_runs), with its format, row count and columns. It runs as svc_gate, the credential path''s owner, because svc_runtime may not read report runs or the report catalogue; svc_gate''s policies show only the organization the link''s signature names (svc.gate_organization, its own setting, restored on return) and then the opened context''s report runs.';

comment on function api.report_download_create(text,text,integer) is 'createReportDownload: once the client''s run has results to read (api.report_results_ready), a short-lived link token naming the run, the request''s organization, the client and an expiry p_lifetime_seconds ahead, signed with app_private.capability_mac (purpose report-download). It runs as svc_api because svc_runtime may neither read report runs nor sign capabilities; the run is read under svc_api''s policies in the request''s signed organization, and the token names that organization and client.';

comment on function api.report_get(text) is 'getReport: the report definition as the caller sees it (api.reports); SVN04 REPORT_NOT_FOUND when there is none or no request organization, SVR04 REPORT_ROLE_REQUIRED when the client holds none of its required_roles (one of them is enough). It runs as svc_api because the report catalogue in app_private is not granted to svc_runtime; the definitions are the same for every organization, and the Roles are the signed context''s.';

comment on function api.report_results_ready(text,text) is 'True when the calling client''s run p_run_id of report p_report_id has results to read (getReportResults, createReportDownload): after api.report_run_get''s checks, SVC09 REPORT_FAILED for a failed run, SVC09 CONFLICT while it is queued or running, SVC09 REPORT_RUN_EXPIRED once its results were purged or passed expires_at. It runs as svc_api because svc_runtime may not read app.report_runs; the run is read in the request''s organization under "Clients see their own report runs".';

comment on function api.report_rows(text,integer,integer) is 'Rows p_from to p_to of run p_run_id''s results, in order, for the report download stream after api.report_download_begin has checked the link and opened its client''s context in the same statement. It runs as svc_api because svc_runtime may not read app.report_results; the read names the context''s organization and "Results are readable with their run" shows only the rows of that organization''s runs of the calling client, so without a valid context it returns nothing.';

comment on function api.report_run_create(text,jsonb,text) is 'createReportRun: the definition and the client''s Roles (api.report_get), a format the definition offers (SVV22 EXPORT_FORMAT_NOT_SUPPORTED), a from/to range with to on or after from and at most three years later, which bounds a run''s work (SVV22 INVALID_REPORT_PARAMETERS; the API validated the rest against parameters_schema); then a queued run with the definition''s version and the organization''s timezone, and its job. It runs as svc_api because svc_runtime may not read the catalogue or insert report runs; "Clients request report runs" admits only a row of the signed context''s organization and client, and tg_report_runs__lifecycle only a queued one.';

comment on function api.report_run_get(text,text) is 'getReportRun: after getReport''s checks (api.report_get), the calling client''s run p_run_id of report p_report_id as api.report_runs shows it; SVN04 REPORT_RUN_NOT_FOUND for another report''s run or any run the client did not request. It runs as svc_api because svc_runtime may not read the catalogue or report runs, and svc_api''s policy shows only the runs of the request''s signed organization and client.';

comment on function app_private.bi_context() is 'The organization and Roles bound to the session''s BI login (app_private.bi_logins, by session_user); nothing for any other login, and nothing on a Citus worker, which has no BI logins. The context accessors (app.current_organization_id, app.current_roles) fall back to it when a session has no signed request context, so a BI login reads the reporting views of its one organization with its Roles. It runs as svc_gate because the bindings are a credential table granted to svc_gate alone, whose policy shows only the session''s own binding; a BI login cannot change its session_user, so it cannot borrow another binding.';

comment on function app_private.queue_report_run(text) is 'Queues the report_run job of run p_run_id (at most 3 attempts, job key report_run:<id>, so one job per run) for the request''s organization through app_private.queue_job: graphile-worker on one server, the organization''s job outbox on Citus, in the same transaction as the run''s insert. It runs as svc_owner because the queue and app_private.queue_job are not svc_api''s to use; the organization is the signed context''s, and queue_job refuses a job without one (SV500 JOB_WITHOUT_ORGANIZATION).';

comment on function reporting.invoice_aging(jsonb) is 'The rpt_invoice_aging report: per customer and currency, the amounts due (total less amount paid) on sent invoices with an open balance, by days past the due date (else the issue or creation date) as of p.as_of (default today): 0 to 30 (including not yet due), 31 to 60, 61 to 90, over 90, with the total and the invoice count; amounts are decimal strings at the currency''s scale (app_private.money_text), never floats. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';

comment on function reporting.member_utilization(jsonb) is 'The rpt_member_utilization report: per active member, the minutes worked and billable in p.from to p.to (time entries not deleted) against a capacity of working days (Monday to Friday) times p.capacity_minutes_per_day (default 480), with utilization and billable utilization as 4-decimal strings (null when the range has no working day). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on members and time entries judge the client''s Roles then, and every table read names that organization.';

comment on function reporting.payments_received(jsonb) is 'The rpt_payments_received report: recorded payments per period (p.period day, week or month, default month) of their received date and per currency in p.from to p.to, with their count and total as a decimal string at the invoice currency''s scale (app_private.money_text), never a float. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies (payments and invoices for managers and finance) judge the client''s Roles then, and every table read names that organization.';

comment on function reporting.project_progress(jsonb) is 'The rpt_project_progress report: per project (active ones unless p.include_archived), its tasks that are not archived by workflow status category (open, done, cancelled), its overdue open tasks, and the tasks completed in the optional range p.from to p.to. The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on projects, tasks and workflows judge the client''s Roles then, and every table read names that organization.';

comment on function reporting.ticket_volume(jsonb) is 'The rpt_ticket_volume report: per week from the week of p.from to p.to, the tickets created in the range, how many of them are solved, and the median hours from creation to resolution (one decimal). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s ticket policy (the ticket module and the organization''s read permissions for the client''s Roles) is judged then, and the read names that organization.';

comment on function reporting.time_by_project(jsonb) is 'The rpt_time_by_project report: billable, non-billable and total minutes per project and member in p.from to p.to (time entries not deleted, any status), optionally of one project (p.project_id). The worker runs it under the requesting client''s signed context when the run executes; it runs as svc_api, not as the worker (whose operator session sees every organization), so that svc_api''s policies on time entries and projects judge the client''s Roles then, and every table read names that organization.';

comment on policy "A BI session reads its own binding" on app_private.bi_logins is 'svc_gate may read only the binding whose role_name is the session''s login (session_user): app_private.bi_context learns a BI session''s organization and Roles and nothing of any other login''s. A BI login cannot change its session_user, so the binding cannot be forged, and a session of any other login finds no row.';

comment on policy "Clients request report runs" on app.report_runs is 'svc_api may insert a report run only for the request''s signed organization and with the calling API Client as its requester (client_id): a client cannot run a report in another organization or for another client. tg_report_runs__lifecycle requires the new run to be queued.';

comment on policy "Clients see their own report runs" on app.report_runs is 'svc_api may read only the report runs of the request''s signed organization that its API Client requested: a run and its results belong to the client that asked (REPORT_RUN_NOT_FOUND for any other). With no valid context it sees nothing.';

comment on policy "Commands act in the request's organization" on app.report_results is 'svc_owner, svc_worker and svc_admin, every command: the report results of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker writes a run''s rows (app_private.report_run_execute) and the retention purge deletes expired ones, across organizations; a definer running in a request cannot reach another organization''s results even with a wrong WHERE.';

comment on policy "Commands act in the request's organization" on app.report_runs is 'svc_owner, svc_worker and svc_admin, every command: the report runs of the request''s signed organization, or of every organization in an operator session (app_private.operator_session(): the worker, svc-admin, migrations). The worker starts, completes or fails runs and the retention purge marks results purged, across organizations; a definer running in a request cannot reach another organization''s runs even with a wrong WHERE.';

comment on policy "Results are readable with their run" on app.report_results is 'svc_api may read result rows only in the request''s signed organization and only when their client_id is the calling API Client''s: the results of the client''s own report runs, as "Clients see their own report runs" shows the runs. client_id is copied from the run by tg__client_of_parent when a row is inserted, so the policy judges the row alone, without reading app.report_runs.';

comment on policy "The gate reads report runs a link opened" on app.report_runs is 'svc_gate may read report runs only of the organization of the signed request context: in api.report_download_begin, once the link''s signature held and app_private.begin_delivery_context opened its client''s context. Before that, or with a forged or copied context, the gate sees no report run.';

comment on function app_private.tg_report_runs__emit() is 'AFTER UPDATE trigger on app.report_runs: when a run''s status becomes succeeded or failed, it writes the webhook event report_run.succeeded or report_run.failed (app_private.emit_event), delivered only to the client that requested the run, the only one that can see it. It runs as svc_owner, which owns the outbox writer, and the event names the run''s own organization, within svc_owner''s policy.';

comment on function app_private.tg_report_runs__lifecycle() is 'BEFORE INSERT OR UPDATE trigger on app.report_runs, for every writer: a run starts queued; its request (organization, id, report, definition version, client, parameters, format, created_at) never changes; its status moves only queued to running, running to succeeded or failed, or queued to failed; purged results never come back. Any violation raises SVC09 CONFLICT.';

/** On a Citus coordinator, the BI relay's own objects (made by the migrations for the cluster only). */
do $$
begin
  if to_regprocedure('reporting_private.bi_rows(text)') is null then
    return;
  end if;
  comment on function reporting_private.bi_rows(text) is 'A BI login''s read of a reporting view on a cluster: for the login''s organization and Roles (app_private.bi_context), it connects over dblink as svc_reporting_relay to the worker that holds that organization and calls reporting_private.bi_rows_of there with a proof bound to that worker''s backend (app_private.bi_relay_proof), so that the relay''s password alone reads nothing. It runs as svc_relay, which may open the relay''s connection and read its password where Citus keeps it; a BI login may not.';
  comment on function reporting_private.bi_rows_of(text,text,text[],text) is 'On the worker that holds the organization: the rows of reporting view p_view for p_organization_id and Roles p_roles, only in a session of svc_reporting_relay that carries the coordinator''s proof for this backend (REPORTING_RELAY_ONLY otherwise). It signs that organization''s request context and reads the view over this node''s copies of the api views and its shards, so the policies of that context decide the rows; it runs as svc_relay, which reads nothing without that context.';
  comment on function app_private.reporting_rows_read(text) is 'The relay''s read of one reporting view''s query as svc_api, the owner the api views read as, under the request context reporting_private.bi_rows_of signed: the same rows a BI login reads on one server.';
  comment on policy "The relay reads the organization a proof named" on app.organizations is 'svc_relay reads the one organization whose id reporting_private.bi_rows_of sets in svc.relay_organization around its read of the flags, after checking the coordinator''s proof: the organization the proof named, nothing else.';
end
$$;

/** The policies app_private.job_queue_privileges makes on graphile-worker's tables (after its own
 * migrations, which run after ours) say their reasons too. */
create or replace function app_private.job_queue_privileges()
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  t regclass;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner, svc_worker;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner, svc_worker;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  grant select, insert, update, delete on all tables in schema graphile_worker to svc_worker;
  grant execute on all functions in schema graphile_worker to svc_worker;
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'graphile_worker' and c.relkind in ('r', 'p') and c.relrowsecurity loop
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues')
       and not exists (select from pg_policy where polrelid = t and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on %s for all to svc_owner using (%s) with check (%2$s)', t,
        case t::text when 'graphile_worker._private_jobs'
          then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
          else 'true' end);
    end if;
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues') then
      execute format('comment on policy "Commands queue jobs" on %s is %L', t, case t::text when 'graphile_worker._private_jobs'
        then 'svc_owner may read and write only the jobs whose payload names the signed request''s organization (app_private.queue_job adds organization_id to every payload), or any job in an operator session (the worker, svc-admin, migrations): on one server a command queues and sees only its own organization''s jobs (on Citus jobs go through app_private.job_outbox).'
        else 'svc_owner may read, add and update graphile-worker''s task and queue names, which add_job upserts for every job it queues: they carry no tenant data, so every row is allowed; which jobs a command reaches is fenced by the policy on graphile_worker._private_jobs.' end);
    end if;
    if not exists (select from pg_policy where polrelid = t and polname = 'The worker runs every job') then
      execute format('create policy "The worker runs every job" on %s for all to svc_worker using (true) with check (true)', t);
    end if;
    execute format('comment on policy "The worker runs every job" on %s is %L', t,
      'svc_worker reads and writes every row of graphile-worker''s tables, of every organization, because it runs the queue for all of them (an operator). graphile-worker keeps row security on its tables with no policy of its own, so without this one the worker''s login would see no job.');
  end loop;
end
$function$;

-- migrate:down
create or replace function app_private.job_queue_privileges()
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
declare
  t regclass;
begin
  if to_regnamespace('graphile_worker') is null then
    return;
  end if;
  grant usage on schema graphile_worker to svc_owner, svc_worker;
  grant select, insert, update on graphile_worker._private_jobs, graphile_worker._private_tasks, graphile_worker._private_job_queues to svc_owner;
  grant usage on all sequences in schema graphile_worker to svc_owner, svc_worker;
  grant execute on function graphile_worker.add_job(text, json, text, timestamptz, integer, text, integer, text[], text),
    graphile_worker.add_jobs(graphile_worker.job_spec[], boolean) to svc_owner;
  grant select, insert, update, delete on all tables in schema graphile_worker to svc_worker;
  grant execute on all functions in schema graphile_worker to svc_worker;
  for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'graphile_worker' and c.relkind in ('r', 'p') and c.relrowsecurity loop
    if t::text in ('graphile_worker._private_jobs', 'graphile_worker._private_tasks', 'graphile_worker._private_job_queues')
       and not exists (select from pg_policy where polrelid = t and polname = 'Commands queue jobs') then
      execute format('create policy "Commands queue jobs" on %s for all to svc_owner using (%s) with check (%2$s)', t,
        case t::text when 'graphile_worker._private_jobs'
          then $e$app_private.operator_session() or (payload ->> 'organization_id') = app.current_organization_id()$e$
          else 'true' end);
    end if;
    if not exists (select from pg_policy where polrelid = t and polname = 'The worker runs every job') then
      execute format('create policy "The worker runs every job" on %s for all to svc_worker using (true) with check (true)', t);
    end if;
  end loop;
end
$function$;
set local lock_timeout = '3s';
comment on function api.access_token_record(text,text,text,bytea,timestamp with time zone) is null;
comment on function api.authenticate_client(text,text,text) is null;
comment on function api.idempotency_claim(text,text,text,text) is null;
comment on function api.idempotency_complete(text,text,text,integer,jsonb,text) is null;
comment on function api.idempotency_stored(text,text,text) is null;
comment on function api.rate_limit_lease(text,bigint,integer,integer) is null;
comment on function api.rate_limit_release(text[],bigint[],integer[]) is null;
comment on function api.signing_key_bootstrap(text,text,jsonb,text) is null;
comment on function api.signing_keys_current() is null;
comment on policy "Clients see only themselves" on app.api_clients is null;
comment on policy "Clients use only their own idempotency keys" on app.idempotency_keys is null;
comment on policy "Commands act in the request's organization" on app.api_clients is null;
comment on policy "Commands act in the request's organization" on app.idempotency_keys is null;
comment on policy "The control plane keeps the client directory" on app_private.client_directory is null;
comment on policy "The control plane manages client secrets" on app.client_secrets is null;
comment on policy "The gate reads clients of the organization it was asked about" on app.api_clients is null;
comment on policy "The gate reads secrets of the organization it was asked about" on app.client_secrets is null;
comment on policy "The gate reads tokens of the organization it was asked about" on app_private.access_tokens is null;
comment on policy "The gate records tokens of the organization it was asked about" on app_private.access_tokens is null;
comment on policy "The lookup sees the one client it was asked for" on app_private.client_directory is null;
comment on policy "The worker purges token records that have run out" on app_private.access_tokens is null;
comment on policy "The worker sees token records that have run out" on app_private.access_tokens is null;
comment on function app_private.tg__client_of_parent() is null;
comment on function app_private.tg_api_clients__plan_allows_clients() is null;
comment on function app_private.tg_api_clients__touch() is null;
comment on function app_private.tg_client_secrets__bump_client_version() is null;
comment on function app_private.shard_views_advance() is null;
comment on function app_private.shard_views_current(bigint) is null;
comment on function app_private.statement_on_shards(text,text) is null;
comment on function api.command_answered(bigint) is null;
comment on function api.require_any_role(text[],text) is null;
comment on function api.service_schema_version() is null;
comment on function app_private.capability_mac(text,text) is null;
comment on function app_private.check_subject(text) is null;
comment on function app_private.context_mac(text,text,text,text) is null;
comment on function app_private.context_ok() is null;
comment on function app_private.may_read_internal_notes() is null;
comment on function app_private.set_context(text,text,text[],text) is null;
comment on policy "Clients see their own organization" on app.organizations is null;
comment on policy "Clients with any Role see members of their organization" on app.members is null;
comment on policy "Commands act in the request's organization" on app.members is null;
comment on policy "Commands act in the request's organization" on app.organizations is null;
comment on policy "The gate reads the organization it was asked about" on app.organizations is null;
comment on function app_private.tg__touch_version() is null;
comment on function app_private.tg_organizations__seed_schemas() is null;
comment on function api.approval_exists(text) is null;
comment on function api.require_time_entry_read() is null;
comment on function api.time_entry_batch(jsonb,boolean) is null;
comment on function api.time_entry_create(jsonb) is null;
comment on function api.time_entry_delete(text) is null;
comment on function api.time_entry_get(text) is null;
comment on function api.time_entry_submit(text) is null;
comment on function api.time_entry_update(text,integer[],jsonb) is null;
comment on function app_private.may_read_time_entries() is null;
comment on function app_private.request_time_entry_approval(text) is null;
comment on policy "Clients see approvals of resources their Roles cover" on app.approvals is null;
comment on policy "Commands act in the request's organization" on app.approvals is null;
comment on policy "Commands act in the request's organization" on app.time_entries is null;
comment on policy "Commands act in the request's organization" on app.time_entry_audit is null;
comment on policy "Managers change time" on app.time_entries is null;
comment on policy "Managers record time" on app.time_entries is null;
comment on policy "Managers write the time audit" on app.time_entry_audit is null;
comment on policy "Managers, finance, and hr where permitted read time entries" on app.time_entries is null;
comment on function app_private.tg_time_entries__lock() is null;
comment on function app_private.tg_time_entries__no_delete() is null;
comment on function app_private.tg_time_entries__submitted_has_approval() is null;
comment on function app_private.tg_time_entries__validate() is null;
comment on function api.conversation_archive(text) is null;
comment on function api.conversation_clear_context(text) is null;
comment on function api.conversation_create(text,jsonb,jsonb) is null;
comment on function api.conversation_get(text) is null;
comment on function api.conversation_message_create(text,jsonb) is null;
comment on function app_private.conversation_compact(text,text) is null;
comment on function app_private.conversation_subject(jsonb) is null;
comment on policy "Clients change their own conversations" on app.conversations is null;
comment on policy "Clients see their own conversations" on app.conversations is null;
comment on policy "Clients start conversations" on app.conversations is null;
comment on policy "Clients write to their own conversations" on app.conversation_messages is null;
comment on policy "Commands act in the request's organization" on app.conversation_messages is null;
comment on policy "Commands act in the request's organization" on app.conversations is null;
comment on policy "Messages are readable with their conversation" on app.conversation_messages is null;
comment on function app_private.tg_conversation_messages__append() is null;
comment on function app_private.tg_conversation_messages__emit() is null;
comment on function app_private.tg_conversations__lifecycle() is null;
comment on function app_private.tg_runs__conversation_reply() is null;
comment on function api.project_create(jsonb,integer) is null;
comment on function api.project_get(text) is null;
comment on function api.project_set_status(text,text) is null;
comment on function api.project_update(text,integer[],jsonb,integer) is null;
comment on function api.task_add_note(text,text,text) is null;
comment on function api.task_create(jsonb,integer) is null;
comment on function api.task_get(text) is null;
comment on function api.task_replace_dependencies(text,integer[],text[]) is null;
comment on function api.task_set_archived(text,boolean) is null;
comment on function api.task_transition(text,text,timestamp with time zone,text) is null;
comment on function api.task_update(text,integer[],jsonb,integer) is null;
comment on function app_private.custom_field_errors(text,text,jsonb,jsonb,text[],boolean) is null;
comment on function app_private.custom_field_patch_errors(text,jsonb,jsonb) is null;
comment on function app_private.project_archive_blockers(text,text) is null;
comment on function app_private.readable_custom_fields(text,text,jsonb) is null;
comment on function app_private.task_archive_blockers(text,text) is null;
comment on policy "Clients see dependencies in their organization" on app.task_dependencies is null;
comment on policy "Clients see notes in their organization" on app.task_notes is null;
comment on policy "Clients see task activity of their organization" on app.task_activity is null;
comment on policy "Clients see the custom fields their Roles may read" on app.custom_field_definitions is null;
comment on policy "Clients see their organization's object schemas" on app.object_schemas is null;
comment on policy "Clients see their organization's workflows" on app.task_workflow_statuses is null;
comment on policy "Clients see their organization's workflows" on app.task_workflow_transitions is null;
comment on policy "Clients see their organization's workflows" on app.task_workflows is null;
comment on policy "Clients with any Role see projects of their organization" on app.projects is null;
comment on policy "Clients with any Role see tasks of their organization" on app.tasks is null;
comment on policy "Commands act in the request's organization" on app.custom_field_definitions is null;
comment on policy "Commands act in the request's organization" on app.object_schemas is null;
comment on policy "Commands act in the request's organization" on app.projects is null;
comment on policy "Commands act in the request's organization" on app.task_activity is null;
comment on policy "Commands act in the request's organization" on app.task_dependencies is null;
comment on policy "Commands act in the request's organization" on app.task_notes is null;
comment on policy "Commands act in the request's organization" on app.task_workflow_statuses is null;
comment on policy "Commands act in the request's organization" on app.task_workflow_transitions is null;
comment on policy "Commands act in the request's organization" on app.task_workflows is null;
comment on policy "Commands act in the request's organization" on app.tasks is null;
comment on policy "Managers change dependencies" on app.task_dependencies is null;
comment on policy "Managers create projects" on app.projects is null;
comment on policy "Managers create tasks" on app.tasks is null;
comment on policy "Managers record task activity" on app.task_activity is null;
comment on policy "Managers update projects" on app.projects is null;
comment on policy "Managers update tasks" on app.tasks is null;
comment on policy "Managers, or members where the task policy permits, add notes" on app.task_notes is null;
comment on function app_private.tg__check_custom_fields() is null;
comment on function app_private.tg_custom_field_definitions__bump_schema_version() is null;
comment on function app_private.tg_organizations__seed_task_workflow() is null;
comment on function app_private.tg_projects__check_references() is null;
comment on function app_private.tg_projects__status_change() is null;
comment on function app_private.tg_task_dependencies__no_cycle() is null;
comment on function app_private.tg_task_notes__members_may_add() is null;
comment on function app_private.tg_tasks__archive_rules() is null;
comment on function app_private.tg_tasks__check_references() is null;
comment on function app_private.tg_tasks__legal_transition() is null;
comment on function api.integration_connection_hidden_reason(text) is null;
comment on function api.integration_readiness(text) is null;
comment on function api.invoice_attach_pdf(text,text,bytea) is null;
comment on function api.invoice_create(jsonb) is null;
comment on function api.invoice_replace_lines(text,integer[],jsonb) is null;
comment on function api.invoice_send(text,boolean) is null;
comment on function api.invoice_update(text,integer[],jsonb) is null;
comment on function api.invoice_void(text) is null;
comment on function api.payment_create(jsonb) is null;
comment on function app_private.invoice_recompute_totals(text[],text[]) is null;
comment on policy "Clients see customers of their organization" on app.customers is null;
comment on policy "Clients see organization connections relevant to their Roles" on app.integration_connections is null;
comment on policy "Commands act in the request's organization" on app.customers is null;
comment on policy "Commands act in the request's organization" on app.integration_connections is null;
comment on policy "Commands act in the request's organization" on app.invoice_lines is null;
comment on policy "Commands act in the request's organization" on app.invoices is null;
comment on policy "Commands act in the request's organization" on app.payments is null;
comment on policy "Commands act in the request's organization" on app_private.invoice_number_counters is null;
comment on policy "Managers and finance change invoices" on app.invoices is null;
comment on policy "Managers and finance delete draft lines" on app.invoice_lines is null;
comment on policy "Managers and finance read invoices" on app.invoices is null;
comment on policy "Managers and finance read lines" on app.invoice_lines is null;
comment on policy "Managers and finance read payments" on app.payments is null;
comment on policy "Managers and finance record payments" on app.payments is null;
comment on policy "Managers and finance write invoices" on app.invoices is null;
comment on policy "Managers and finance write lines" on app.invoice_lines is null;
comment on function app_private.tg_integration_connections__emit() is null;
comment on function app_private.tg_invoice_lines__compute() is null;
comment on function app_private.tg_invoice_lines__totals_changed() is null;
comment on function app_private.tg_invoices__emit() is null;
comment on function app_private.tg_invoices__guard() is null;
comment on function app_private.tg_invoices__lifecycle() is null;
comment on function app_private.tg_invoices__pdf_required() is null;
comment on function app_private.tg_invoices__queue_sync() is null;
comment on function app_private.tg_invoices__touch() is null;
comment on function app_private.tg_payments__apply() is null;
comment on function app_private.tg_payments__emit() is null;
comment on function app_private.tg_payments__immutable() is null;
comment on function api.service_outbox_status() is null;
comment on function api.webhook_delivery_get(text,text) is null;
comment on function api.webhook_delivery_replay(text,text) is null;
comment on function api.webhook_endpoint_create(text,text,text[],text,text) is null;
comment on function api.webhook_endpoint_rotate(text,text,integer) is null;
comment on function api.webhook_endpoint_set_status(text,text,boolean) is null;
comment on function api.webhook_endpoint_test(text) is null;
comment on function api.webhook_endpoint_update(text,integer[],jsonb,text) is null;
comment on function app_private.emit_event(text,text,text,text,integer,text) is null;
comment on function app_private.event_resource_visible(text,text,text) is null;
comment on policy "Clients change their own endpoints" on app.webhook_endpoints is null;
comment on policy "Clients create their own endpoints" on app.webhook_endpoints is null;
comment on policy "Clients see attempts of their own deliveries" on app.webhook_delivery_attempts is null;
comment on policy "Clients see deliveries to their own endpoints" on app.webhook_deliveries is null;
comment on policy "Clients see their own endpoints" on app.webhook_endpoints is null;
comment on policy "Commands act in the request's organization" on app.events is null;
comment on policy "Commands act in the request's organization" on app.webhook_deliveries is null;
comment on policy "Commands act in the request's organization" on app.webhook_delivery_attempts is null;
comment on policy "Commands act in the request's organization" on app.webhook_endpoints is null;
comment on policy "Commands act in the request's organization" on app_private.admin_notifications is null;
comment on policy "Commands act in the request's organization" on app_private.job_outbox is null;
comment on policy "Events are visible through the client's deliveries" on app.events is null;
comment on policy "The service status sees deliveries waiting" on app.webhook_deliveries is null;
comment on policy "The service status sees events waiting for their fan-out" on app.events is null;
comment on function app_private.tg__emit_event() is null;
comment on function app_private.tg_webhook_deliveries__replay_of() is null;
comment on function app_private.tg_webhook_endpoints__check_events() is null;
comment on function app_private.tg_webhook_endpoints__limit() is null;
comment on function api.file_archive(text) is null;
comment on function api.file_chunks(text,integer,integer) is null;
comment on function api.file_download_begin(text) is null;
comment on function api.file_download_create(text,integer) is null;
comment on function api.file_get(text) is null;
comment on function api.file_upload_begin(text) is null;
comment on function api.file_upload_chunks(text,integer,bytea[]) is null;
comment on function api.file_upload_chunks(text,integer,text[]) is null;
comment on function api.file_upload_complete(text) is null;
comment on function api.file_upload_create(jsonb,integer) is null;
comment on function api.file_upload_finish(text,bigint,text,text,boolean) is null;
comment on function api.file_upload_get(text) is null;
comment on function app_private.file_link(text) is null;
comment on function app_private.file_policy(text) is null;
comment on function app_private.member_hr_profile(text,text) is null;
comment on function app_private.queue_file_scan(text) is null;
comment on policy "Chunks are readable where their file is" on app.file_chunks is null;
comment on policy "Clients move their own uploads on" on app.file_uploads is null;
comment on policy "Clients read their organization's file policy" on app.file_policies is null;
comment on policy "Clients see their own uploads" on app.file_uploads is null;
comment on policy "Clients write the bytes of their own pending uploads" on app.file_chunks is null;
comment on policy "Commands act in the request's organization" on app.file_chunks is null;
comment on policy "Commands act in the request's organization" on app.file_contents is null;
comment on policy "Commands act in the request's organization" on app.file_policies is null;
comment on policy "Commands act in the request's organization" on app.file_uploads is null;
comment on policy "Commands act in the request's organization" on app.files is null;
comment on policy "File content is readable where the file is" on app.file_contents is null;
comment on policy "Files are visible where the linked resource is" on app.files is null;
comment on policy "The gate locks uploads a link names" on app.file_uploads is null;
comment on policy "The gate reads files a link opened" on app.files is null;
comment on policy "The gate reads uploads a link names" on app.file_uploads is null;
comment on policy "Writers of the linked resource add uploaded files" on app.files is null;
comment on policy "Writers of the linked resource change files" on app.files is null;
comment on policy "Writers of the linked resource start uploads" on app.file_uploads is null;
comment on function app_private.tg_file_bytes__of_parent() is null;
comment on function app_private.tg_file_chunks__guard() is null;
comment on function app_private.tg_file_contents__check() is null;
comment on function app_private.tg_file_uploads__lifecycle() is null;
comment on function app_private.tg_files__emit() is null;
comment on function app_private.tg_files__lifecycle() is null;
comment on function app_private.tg_files__retention() is null;
comment on function api.require_tickets(boolean) is null;
comment on function api.ticket_create(jsonb) is null;
comment on function api.ticket_get(text) is null;
comment on function api.ticket_message_create(text,jsonb) is null;
comment on function api.ticket_require(text) is null;
comment on function api.ticket_search_ids(text) is null;
comment on function api.ticket_transition(text,text,text) is null;
comment on function api.ticket_update(text,integer[],jsonb) is null;
comment on function app_private.may_read_tickets() is null;
comment on policy "Clients see their organization's ticket transitions" on app.ticket_transitions is null;
comment on policy "Clients see their organization's ticket workflow" on app.ticket_statuses is null;
comment on policy "Commands act in the request's organization" on app.ticket_messages is null;
comment on policy "Commands act in the request's organization" on app.ticket_search is null;
comment on policy "Commands act in the request's organization" on app.ticket_statuses is null;
comment on policy "Commands act in the request's organization" on app.ticket_transitions is null;
comment on policy "Commands act in the request's organization" on app.tickets is null;
comment on policy "Commands act in the request's organization" on app_private.ticket_number_counters is null;
comment on policy "Managers add messages" on app.ticket_messages is null;
comment on policy "Managers change tickets" on app.tickets is null;
comment on policy "Managers create tickets" on app.tickets is null;
comment on policy "Search follows the tickets" on app.ticket_search is null;
comment on policy "Ticket readers see replies, staff also internal notes" on app.ticket_messages is null;
comment on policy "Ticket readers see their organization's tickets" on app.tickets is null;
comment on function app_private.tg_organizations__seed_ticket_workflow() is null;
comment on function app_private.tg_ticket_messages__emit() is null;
comment on function app_private.tg_ticket_messages__index() is null;
comment on function app_private.tg_ticket_messages__rules() is null;
comment on function app_private.tg_tickets__emit() is null;
comment on function app_private.tg_tickets__index() is null;
comment on function app_private.tg_tickets__rules() is null;
comment on function api.agent_blockers(text,text,boolean) is null;
comment on function api.agent_get(text) is null;
comment on function api.agent_input_schema(text) is null;
comment on function api.agent_readiness(text,jsonb,jsonb,boolean) is null;
comment on function api.agent_run_create(text,jsonb,jsonb,jsonb,boolean) is null;
comment on function api.run_cancel(text) is null;
comment on function api.run_events_after(text,integer,integer) is null;
comment on function api.run_get(text) is null;
comment on function api.run_submit_action(text,text,jsonb) is null;
comment on function api.run_wake_key() is null;
comment on function app_private.agent_lookup(text) is null;
comment on function app_private.queue_agent_run(text) is null;
comment on function app_private.run_event(text,text,text,jsonb) is null;
comment on function app_private.run_lock(text) is null;
comment on function app_private.skill_blocker(text,text) is null;
comment on function skills.tasks_find_attention(jsonb,text) is null;
comment on policy "Clients answer and cancel their own runs" on app.runs is null;
comment on policy "Clients see their organization's publications" on app.agent_publications is null;
comment on policy "Clients see their own runs" on app.runs is null;
comment on policy "Clients start runs" on app.runs is null;
comment on policy "Commands act in the request's organization" on app.agent_publications is null;
comment on policy "Commands act in the request's organization" on app.run_events is null;
comment on policy "Commands act in the request's organization" on app.run_tool_calls is null;
comment on policy "Commands act in the request's organization" on app.runs is null;
comment on policy "Events are readable with their run" on app.run_events is null;
comment on policy "Tool calls are readable with their run" on app.run_tool_calls is null;
comment on function app_private.tg_agent_definitions__skills_exist() is null;
comment on function app_private.tg_organizations__publish_agents() is null;
comment on function app_private.tg_runs__events() is null;
comment on function app_private.tg_runs__lifecycle() is null;
comment on function api.report_download_begin(text) is null;
comment on function api.report_download_create(text,text,integer) is null;
comment on function api.report_get(text) is null;
comment on function api.report_results_ready(text,text) is null;
comment on function api.report_rows(text,integer,integer) is null;
comment on function api.report_run_create(text,jsonb,text) is null;
comment on function api.report_run_get(text,text) is null;
comment on function app_private.bi_context() is null;
comment on function app_private.queue_report_run(text) is null;
comment on function reporting.invoice_aging(jsonb) is null;
comment on function reporting.member_utilization(jsonb) is null;
comment on function reporting.payments_received(jsonb) is null;
comment on function reporting.project_progress(jsonb) is null;
comment on function reporting.ticket_volume(jsonb) is null;
comment on function reporting.time_by_project(jsonb) is null;
comment on policy "A BI session reads its own binding" on app_private.bi_logins is null;
comment on policy "Clients request report runs" on app.report_runs is null;
comment on policy "Clients see their own report runs" on app.report_runs is null;
comment on policy "Commands act in the request's organization" on app.report_results is null;
comment on policy "Commands act in the request's organization" on app.report_runs is null;
comment on policy "Results are readable with their run" on app.report_results is null;
comment on policy "The gate reads report runs a link opened" on app.report_runs is null;
comment on function app_private.tg_report_runs__emit() is null;
comment on function app_private.tg_report_runs__lifecycle() is null;
do $$
begin
  if to_regprocedure('reporting_private.bi_rows(text)') is null then
    return;
  end if;
  comment on function reporting_private.bi_rows(text) is null;
  comment on function reporting_private.bi_rows_of(text,text,text[],text) is null;
  comment on function app_private.reporting_rows_read(text) is null;
  comment on policy "The relay reads the organization a proof named" on app.organizations is null;
end
$$;
