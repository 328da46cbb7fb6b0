import json, os, re, sys
OUT = sys.argv[1]
BASE = 20261206060000
AREAS = ['roles_and_schemas', 'tenancy_and_context', 'control_plane', 'projects_and_tasks', 'time', 'invoicing',
         'webhooks_and_outbox', 'files', 'tickets', 'reports_and_bi', 'agents_and_runs', 'conversations',
         'distribution']
CLUSTER = [('citus_placement', 'On a Citus cluster only: where each table\'s rows live, and which functions run where.'), ('citus_relay', 'On a Citus cluster only: the BI relay, and the cluster\'s texts of three skills that read an api view across an organization (replaced by one text in 20261206070000_skills_one_text).'), ('citus_workers', 'On a Citus cluster only: each worker prepared.')]
COUT = sys.argv[2]
TITLE = {
 'roles_and_schemas': 'Roles and schemas: the roles the service, its jobs and BI logins act as, the schemas and who may use them, and who may connect to this database.',
 'tenancy_and_context': 'Tenancy and the request context: organizations, members, the signed per-request context the row policies read, identifiers and errors.',
 'control_plane': 'The control plane: API clients and their secrets, access tokens and signing keys, rate limits, idempotency keys, service status, custom-field schemas.',
 'projects_and_tasks': 'Projects and tasks: projects, task workflows and their transitions, tasks, dependencies, notes and activity.',
 'time': 'Time: time entries, their audit and approvals.',
 'invoicing': 'Invoicing: customers, currencies, invoices and their lines, payments, numbering, integration connections.',
 'webhooks_and_outbox': 'Webhooks and the outbox: events and their types, webhook endpoints, deliveries and attempts, the job outbox the worker drains.',
 'files': 'Files: uploads in chunks, contents, scanning, links and download tokens.',
 'tickets': 'Tickets: ticket workflows, tickets, messages and search.',
 'reports_and_bi': 'Reports and BI access: report definitions, runs and results, the reporting views and BI logins.',
 'agents_and_runs': 'Agents and runs: agent definitions and skills, publications, runs, their events and tool calls.',
 'conversations': 'Conversations: conversations and their messages, and the runs they start.',
 'distribution': 'Distribution on Citus: the helpers that place and prepare shards (on one server they exist and do nothing).',
 'reporting_relay': 'The BI relay on Citus.',
 'workers': 'On Citus, every worker given what is its own.',
}
for d in (OUT, COUT):
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
for n, a in enumerate(AREAS, 1):
    body = ''
    if os.path.exists(f'/tmp/squash/hand/{a}.pre.sql'):
        body += open(f'/tmp/squash/hand/{a}.pre.sql').read().strip('\n') + '\n\n'
    if os.path.exists(f'/tmp/squash/out/{a}.body.sql'):
        body += open(f'/tmp/squash/out/{a}.body.sql').read().strip('\n') + '\n'
    if os.path.exists(f'/tmp/squash/hand/{a}.post.sql'):
        body += '\n' + open(f'/tmp/squash/hand/{a}.post.sql').read().strip('\n') + '\n'
    total = len(AREAS) + len(CLUSTER)
    tables = 'create table' in body
    head = (f'-- migrate:up\n\n/** The baseline, {n} of {total}. {TITLE[a]}\n'
            + (' * Laid out by table: each table, then its keys and indexes, row security and policies, triggers\n'
               ' * and their functions, and grants; then the area\'s views and commands. db/README.md, "The\n'
               ' * baseline", says how it was made and proved equal to the migrations it replaced. */\n' if tables else
               ' * db/README.md, "The baseline", says how it was made and proved equal to the migrations it replaced. */\n')
            + "set local check_function_bodies = false;\nset local client_min_messages = warning;\n"
            "set local search_path = '';\n\n")
    if n > 1:
        # The owners of this area's functions and views may create in its schemas while it runs:
        # `alter … owner to` needs it when the migrating role is not a superuser.
        body = ("-- While this file runs, the owners of its functions and views may create in the schemas (`alter … owner to`\n"
                "-- a role needs it when the migrating role is not a superuser); taken back at its end.\n"
                "grant create on schema api, app, app_private, control, reporting, skills to svc_api, svc_owner, svc_gate, svc_directory, svc_status;\n\n"
                + body.rstrip('\n') + "\n\nrevoke create on schema api, app, app_private, control, reporting, skills from svc_api, svc_owner, svc_gate, svc_directory, svc_status;\n")
    tail = ("\n-- migrate:down\ndo $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', "
            "'the baseline is not undone: restore a backup, or drop the database'); end $$;\n")
    open(f'{OUT}/{BASE + n * 100}_baseline_{a}.sql', 'w').write(head + body + tail)
for n, (a, title) in enumerate(CLUSTER, len(AREAS) + 1):
    head = (f'-- migrate:up\n\n/** The baseline, {n} of {len(AREAS) + len(CLUSTER)}. {title} This folder\'s migrations run on a Citus\n'
            ' * coordinator only, in one chain with db/migrations in version order (scripts/db.ts). */\n'
            "set local check_function_bodies = false;\nset local client_min_messages = warning;\n"
            "set local search_path = '';\n\n")
    tail = ("\n-- migrate:down\ndo $$ begin perform app_private.raise('SV500', 'IRREVERSIBLE_MIGRATION', "
            "'the baseline is not undone: restore a backup, or drop the database'); end $$;\n")
    open(f'{COUT}/{BASE + n * 100}_baseline_{a}.sql', 'w').write(head + open(f'/tmp/squash/hand/{a}.sql').read().strip('\n') + '\n' + tail)
print('written')
