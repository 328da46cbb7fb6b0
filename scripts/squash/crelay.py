import re, sys
sys.path.insert(0, '/tmp/squash')
from gen_text import tidy_text
raw = open('/tmp/squash/cluster_raw.sql').read()
parts = re.split(r'^(-- .*)\n\n', raw, flags=re.M)
out = [open('/tmp/squash/hand/citus_relay_roles.sql').read().strip('\n')]
for i in range(1, len(parts), 2):
    label, body = parts[i], parts[i + 1].strip('\n')
    if label.startswith('-- acl pg_catalog.FUNCTION'):
        continue  # revoked from PUBLIC by the placement
    if label.startswith('-- function skills.') and 'invoices_billable_time' in label:
        out.append('/** Three skills read an api view across the organization: on a cluster they read the view\'s\n * function instead (its rows on the organization\'s shards), a second text of each. */')
    text = tidy_text(body)
    if label.startswith('-- comment') or label.startswith('-- acl') or label.startswith('-- constraint'):
        out[-1] += '\n\n' + text
    else:
        out.append(label.replace('-- acl ', '-- privileges ') + '\n\n' + text)
    if label == '-- schema svc_dblink':
        out[-1] += '\n\ncreate extension if not exists dblink schema svc_dblink;'
    if label.startswith('-- constraint app_private.relay_keys'):
        out[-1] += '''

select create_reference_table('app_private.relay_keys');
-- Two v4 UUIDs each, from the server's strong random source: 244 random bits per key.
insert into app_private.relay_keys (inner_key, outer_key)
values (decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'),
        decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex'));'''
open('/tmp/squash/hand/citus_relay.sql', 'w').write('\n\n'.join(out) + '\n')
