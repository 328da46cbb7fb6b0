"""The cluster's own objects: what a coordinator's dump has that one server's does not, or has otherwise."""
import re, sys
def entries(path):
    plain = open(path).read()
    parts = re.split(r'\n--\n-- (Name: [^\n]*)\n--\n', plain)
    out = []
    for i in range(1, len(parts), 2):
        m = re.match(r'Name: (.*); Type: (.*); Schema: (.*); Owner: (.*)$', parts[i])
        body = re.sub(r'\n--\n-- PostgreSQL database dump complete\n--.*', '', parts[i + 1], flags=re.S).strip('\n')
        out.append(dict(name=m[1], type=m[2], schema=m[3], owner=m[4], body=body))
    return out
sys.path.insert(0, '/tmp/squash')
one = {(e['name'], e['type'], e['schema']): e for e in entries('/tmp/squash/plain.sql')}
co = entries('/tmp/squash/coord.sql')
SKIP_TYPES = {'EXTENSION', 'COMMENT'}
chunks = []
def lower(b):
    from gen_text import tidy_text
    return tidy_text(b)
for e in co:
    k = (e['name'], e['type'], e['schema'])
    o = one.get(k)
    if e['type'] == 'EXTENSION' or (e['type'] == 'COMMENT' and e['name'].startswith('EXTENSION')):
        continue
    if o is not None and o['body'] == e['body']:
        continue
    if e['type'] == 'ACL' and o is not None:
        a = [l for l in o['body'].splitlines() if l.strip()]
        b = [l for l in e['body'].splitlines() if l.strip()]
        lines = []
        for l in a:
            if l not in b:
                m = re.match(r'GRANT (.*) ON (.*) TO (.*);$', l)
                assert m, l
                lines.append(f'REVOKE {m[1]} ON {m[2]} FROM {m[3]};')
        lines += [l for l in b if l not in a]
        chunks.append((e, '\n'.join(lines)))
    elif e['type'] == 'VIEW' and o is not None:
        chunks.append((e, e['body'].replace('CREATE VIEW', 'CREATE OR REPLACE VIEW', 1)))
    elif e['type'] == 'FUNCTION' and o is not None:
        chunks.append((e, e['body'].replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION', 1)))
    elif o is not None:
        raise SystemExit(f'differs: {k}')
    else:
        chunks.append((e, e['body']))
for e, b in chunks:
    print(f"-- {e['type'].lower()} {e['schema']}.{e['name']}" if e['schema'] != '-' else f"-- {e['type'].lower()} {e['name']}")
    print()
    print(b)
    print()
