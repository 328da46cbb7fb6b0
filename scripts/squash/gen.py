#!/usr/bin/env python3
"""Re-squash: pg_dump of a database the whole chain migrated, regrouped by area and by table.
Usage: gen.py <db> <outdir>"""
import re, sys, subprocess, json, os, glob, collections

DB = sys.argv[1]
OUT = sys.argv[2]
sys.path.insert(0, '/tmp/squash')
PSQL = ['psql', '-h', '127.0.0.1', '-U', 'postgres', '-d', DB, '-At', '-v', 'ON_ERROR_STOP=1']
MIG = '/tmp/squash/oldmig/db/migrations'

def q(sql):
    return subprocess.run(PSQL + ['-c', sql], check=True, capture_output=True, text=True).stdout

subprocess.run(['pg_dump', '-h', '127.0.0.1', '-U', 'postgres', '-s', '-Fc', '-N', 'graphile_worker', '-f', '/tmp/squash/dump.fc', DB], check=True)
toc = [l for l in subprocess.run(['pg_restore', '-l', '/tmp/squash/dump.fc'], check=True, capture_output=True, text=True).stdout.splitlines() if l and not l.startswith(';')]
plain = subprocess.run(['pg_restore', '-f', '-', '/tmp/squash/dump.fc'], check=True, capture_output=True, text=True).stdout

# Entries of the plain text.
parts = re.split(r'\n--\n-- (Name: [^\n]*)\n--\n', plain)
head, rest = parts[0], parts[1:]
entries = []
for i in range(0, len(rest), 2):
    m = re.match(r'Name: (.*); Type: (.*); Schema: (.*); Owner: (.*)$', rest[i])
    assert m, rest[i]
    body = rest[i + 1].strip('\n')
    entries.append(dict(name=m[1], type=m[2], schema=m[3], owner=m[4], body=body))
assert len(entries) == len(toc), (len(entries), len(toc))
tockey = {}
for t in toc:
    m = re.match(r'(\d+); (\d+) (\d+) (.*)$', t)
    assert m[4] not in tockey, m[4]
    tockey[m[4]] = (int(m[1]), int(m[2]), int(m[3]))
for e in entries:
    k = f"{e['type']} {e['schema']} {e['name']} {e['owner']}"
    e['id'], e['classid'], e['oid'] = tockey[k]

# The tail of the dump (after the last entry: "PostgreSQL database dump complete").
entries[-1]['body'] = re.sub(r'\n--\n-- PostgreSQL database dump complete\n--.*', '', entries[-1]['body'], flags=re.S).strip('\n')

by_key = {}
for e in entries:
    if e['oid']:
        by_key[(e['classid'], e['oid'])] = e
    if e['type'] == 'ROW SECURITY':
        by_key[('rls', e['oid'])] = e

# Object names -> entries for ACL and COMMENT (which name their object).
def objname(e):
    return (e['schema'], e['type'], e['name'])
named = {}
for e in entries:
    if e['type'] not in ('ACL', 'COMMENT'):
        named[(e['schema'], e['type'], e['name'])] = e

for l in q("select p.oid, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname in ('app','app_private','api','control','reporting','skills','reporting_private')").splitlines():
    oid, ident = l.split('|', 1)
    for e in entries:
        if e['type'] in ('FUNCTION', 'PROCEDURE') and e['oid'] == int(oid):
            named[(e['schema'], e['type'], ident)] = e
CLS = dict(pg_class=1259, pg_proc=1255, pg_type=1247, pg_constraint=2606, pg_trigger=2620, pg_policy=3256,
           pg_rewrite=2618, pg_attrdef=2604, pg_namespace=2615)

# Catalog facts.
tables = {}  # oid -> 'schema.name'
for line in q("select c.oid, c.relkind, n.nspname||'.'||c.relname from pg_class c join pg_namespace n on n.oid=c.relnamespace where n.nspname not in ('pg_catalog','information_schema','graphile_worker','pg_toast')").splitlines():
    oid, kind, name = line.split('|')
    tables[int(oid)] = (kind, name)
index_table = {int(a): int(b) for a, b in (l.split('|') for l in q("select indexrelid, indrelid from pg_index").splitlines())}
con_index = {int(a): int(b) for a, b in (l.split('|') for l in q("select conindid, oid from pg_constraint where conindid <> 0 and contype in ('p','u','x')").splitlines())}
con_rel = {int(a): (int(b), int(c)) for a, b, c in (l.split('|') for l in q("select oid, conrelid, contypid from pg_constraint").splitlines())}
trg = {int(a): (int(b), int(c)) for a, b, c in (l.split('|') for l in q("select oid, tgrelid, tgfoid from pg_trigger where not tgisinternal").splitlines())}
pol = {int(a): int(b) for a, b in (l.split('|') for l in q("select oid, polrelid from pg_policy").splitlines())}
rew = {int(a): int(b) for a, b in (l.split('|') for l in q("select oid, ev_class from pg_rewrite").splitlines())}
adef = {int(a): int(b) for a, b in (l.split('|') for l in q("select oid, adrelid from pg_attrdef").splitlines())}
typ = {int(a): (int(b), int(c)) for a, b, c in (l.split('|') for l in q("select oid, typrelid, typelem from pg_type where typnamespace not in ('pg_catalog'::regnamespace)").splitlines())}
procs = {}
for l in q("select p.oid, n.nspname, p.proname, p.prorettype = 'trigger'::regtype, p.prosecdef, p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid=p.pronamespace where n.nspname in ('app','app_private','api','control','reporting','skills','reporting_private')").splitlines():
    a, s, n, t, d, sig = l.split('|')
    procs[int(a)] = dict(schema=s, name=n, trigger=(t == 't'), definer=(d == 't'), sig=sig)

def entry_of(classid, oid):
    """The dump entry that holds a catalog object (or the table it is part of)."""
    if (classid, oid) in by_key:
        return by_key[(classid, oid)]
    if classid == CLS['pg_class']:
        if oid in con_index:
            return entry_of(CLS['pg_constraint'], con_index[oid])
        if oid in index_table:
            return entry_of(CLS['pg_class'], index_table[oid])
        return None
    if classid == CLS['pg_constraint'] and oid in con_rel:
        r, t = con_rel[oid]
        return entry_of(CLS['pg_class'], r) if r else entry_of(CLS['pg_type'], t)
    if classid == CLS['pg_rewrite'] and oid in rew:
        return entry_of(CLS['pg_class'], rew[oid])
    if classid == CLS['pg_attrdef'] and oid in adef:
        return entry_of(CLS['pg_class'], adef[oid])
    if classid == CLS['pg_type'] and oid in typ:
        r, el = typ[oid]
        if r:
            return entry_of(CLS['pg_class'], r)
        if el:
            return entry_of(CLS['pg_type'], el)
    return None

# Entry-level dependencies.
deps = collections.defaultdict(set)
for l in q("select classid, objid, refclassid, refobjid from pg_depend where deptype in ('n','a') and refobjid >= 16384 and objid >= 16384").splitlines():
    a, b, c, d = map(int, l.split('|'))
    x, y = entry_of(a, b), entry_of(c, d)
    if x is not None and y is not None and x is not y:
        deps[x['id']].add(y['id'])
byid = {e['id']: e for e in entries}

# Attach ACL / COMMENT to their objects.
for e in entries:
    if e['type'] in ('ACL', 'COMMENT'):
        kind, _, name = e['name'].partition(' ')
        if kind == 'COLUMN':
            tname = name.split('.')[0]
            target = named.get((e['schema'], 'TABLE', tname)) or named.get((e['schema'], 'VIEW', tname))
        elif kind in ('TABLE', 'VIEW', 'SEQUENCE', 'FUNCTION', 'PROCEDURE', 'SCHEMA', 'TYPE'):
            target = named.get((e['schema'], kind, name)) or named.get(('-', kind, name))
            if target is None and kind == 'TABLE':
                target = named.get((e['schema'], 'VIEW', name))
        elif kind == 'POLICY':
            pname, _, rest = name.rpartition(' ON ')
            pname = pname[1:-1].replace('""', '"') if pname.startswith('"') else pname
            target = next((x for x in entries if x['type'] == 'POLICY' and x['schema'] == e['schema'] and x['name'] == f'{rest} {pname}'), None)
        elif kind == 'TRIGGER':
            tname, _, rest = name.partition(' ON ')
            target = next((x for x in entries if x['type'] == 'TRIGGER' and x['schema'] == e['schema'] and x['name'] == f'{rest} {tname}'), None)
        elif e['name'].startswith('DEFAULT PRIVILEGES'):
            target = None
        else:
            target = None
        if target is None and e['type'] == 'ACL' and kind in ('SCHEMA',):
            target = None
        e['target'] = target['id'] if target else None
        if target:
            deps[e['id']].add(target['id'])

json.dump(dict(entries=entries, deps={k: sorted(v) for k, v in deps.items()}, tables={k: v for k, v in tables.items()},
               trg={k: v for k, v in trg.items()}, pol=pol, procs=procs, index_table=index_table, con_rel=con_rel),
          open('/tmp/squash/model.json', 'w'), default=str)
print(len(entries), 'entries;', sum(len(v) for v in deps.values()), 'dependencies;', sum(1 for e in entries if e['type'] in ('ACL', 'COMMENT') and not e.get('target')), 'unattached ACL/COMMENT')
for e in entries:
    if e['type'] in ('ACL', 'COMMENT') and not e.get('target'):
        print('  unattached:', e['type'], e['schema'], e['name'])

# ---- Areas: where the chain first made each object.
AREAS = ['roles_and_schemas', 'tenancy_and_context', 'control_plane', 'projects_and_tasks', 'time', 'invoicing',
         'webhooks_and_outbox', 'files', 'tickets', 'reports_and_bi', 'agents_and_runs', 'conversations',
         'distribution', 'reporting_relay', 'workers']
home = {}
for f in sorted(glob.glob(f'{MIG}/2026112818*_baseline_*.sql')):
    area = re.search(r'_baseline_(.*)\.sql', f)[1]
    for m in re.finditer(r'^-- (table|view|function|procedure|sequence|schema) (\S+?)(\(.*\))?$', open(f).read(), re.M):
        kind = m[1].upper()
        name = m[2]
        if m[3]:
            name = name + m[3]
        home.setdefault((kind, name), area)
POST_AREA = {  # the migrations after the baseline: the area of what each one made
    '20261206000100': 'files', '20261206000300': 'webhooks_and_outbox', '20261206010000': 'tenancy_and_context',
    '20261206010200': 'tenancy_and_context', '20261206010300': 'webhooks_and_outbox', '20261206010320': 'tenancy_and_context',
    '20261206010350': 'distribution', '20261206020000': 'control_plane', '20261206020200': 'reporting_relay',
    '20261206020400': 'control_plane', '20261206020600': 'files', '20261206020800': 'reporting_relay',
    '20261206021000': 'control_plane', '20261206030000': 'distribution', '20261206030200': 'tenancy_and_context',
    '20261206040000': 'tenancy_and_context', '20261206040100': 'tenancy_and_context',
}
post_texts = {re.match(r'(\d+)', os.path.basename(f))[1]: open(f).read() for f in sorted(glob.glob(f'{MIG}/202612060*.sql'))}

def qualified(e):
    n = e['name']
    if e['type'] in ('FUNCTION', 'PROCEDURE'):
        n = n.replace(', ', ',')
        return f"{e['schema']}.{e['name']}"
    return n if e['schema'] == '-' else f"{e['schema']}.{n}"

def area_of(e):
    kind = e['type']
    key = (kind, qualified(e))
    if key in home:
        return home[key]
    if kind in ('FUNCTION', 'PROCEDURE'):
        base = e['name'].split('(')[0]
        pat = re.compile(rf"create (or replace )?(function|procedure) {re.escape(e['schema'])}\.{re.escape(base)}\(", re.I)
        for v, t in post_texts.items():
            if pat.search(t):
                return POST_AREA.get(v, '?' + v)
    if kind in ('TABLE', 'VIEW'):
        pat = re.compile(rf"create (table|view|or replace view) {re.escape(e['schema'])}\.{re.escape(e['name'])}\b", re.I)
        for v, t in post_texts.items():
            if pat.search(t):
                return POST_AREA.get(v, '?' + v)
    return None

OVERRIDE = {
    'app_private.accounting_sync_load': 'invoicing', 'app_private.accounting_sync_record': 'invoicing',
    'app_private.chat_context': 'conversations', 'app_private.context_budget': 'conversations', 'app_private.message_budget': 'conversations',
    'app_private.linked_resource_visible': 'files', 'app_private.may_read_internal_notes': 'tickets', 'app_private.may_read_tickets': 'tickets',
    'app_private.shard_groups_unprepared': 'distribution', 'control.field_define': 'projects_and_tasks', 'control.field_delete': 'projects_and_tasks',
    'control.reporting_grant': 'reports_and_bi', 'api.members': 'tenancy_and_context', 'app_private.member_hr_profile': 'tenancy_and_context',
    'app_private.tg__client_of_parent': 'webhooks_and_outbox',
}
HOME_TYPES = ('SCHEMA', 'TABLE', 'VIEW', 'FUNCTION', 'PROCEDURE', 'SEQUENCE', 'TYPE', 'DOMAIN')
unknown = []
for e in entries:
    if e['type'] in HOME_TYPES:
        e['area'] = OVERRIDE.get(f"{e['schema']}.{e['name'].split('(')[0]}") or area_of(e)
        if e['area'] is None or e['area'].startswith('?'):
            unknown.append((e['type'], e['schema'], e['name'], e['area']))
print(len(unknown), 'without an area')
for u in unknown:
    print('  ', u)

# ---- Units.
entries = [e for e in entries if not (e['schema'] == 'public' and 'schema_migrations' in e['name'])]
byid = {e['id']: e for e in entries}
unit_of = {}
units = {}
def new_unit(key, kind, area, members):
    units[key] = dict(key=key, kind=kind, area=area, members=members)
    for m in members:
        unit_of[m] = key
tables_by_oid = {e['oid']: e for e in entries if e['type'] == 'TABLE'}
trigger_users = collections.defaultdict(set)
for t_oid, (rel, fn) in trg.items():
    trigger_users[fn].add(rel)
attached = collections.defaultdict(list)  # object id -> ACL/COMMENT ids
for e in entries:
    if e['type'] in ('ACL', 'COMMENT') and e.get('target'):
        attached[e['target']].append(e['id'])

def with_attached(i):
    return [i] + attached.get(i, [])

for e in entries:
    if e['type'] == 'TABLE':
        new_unit(('table', e['id']), 'table', e['area'], [])
for e in entries:
    i = e['id']
    t = e['type']
    owner_table = None
    if t == 'INDEX':
        owner_table = index_table.get(e['oid'])
    elif t in ('CONSTRAINT', 'FK CONSTRAINT'):
        owner_table = con_rel[e['oid']][0]
    elif t == 'ROW SECURITY':
        owner_table = e['oid']
    elif t == 'POLICY':
        owner_table = pol[e['oid']]
    elif t == 'TRIGGER':
        owner_table = trg[e['oid']][0]
    elif t in ('SEQUENCE', 'DEFAULT'):
        m = re.match(r'ALTER TABLE (?:ONLY )?(\S+) ALTER COLUMN', e['body'])
        owner_table = next(x['oid'] for x in tables_by_oid.values() if f"{x['schema']}.{x['name']}" == m[1])
    if owner_table is not None:
        te = tables_by_oid[owner_table]
        units[('table', te['id'])]['members'].extend(with_attached(i))
        for a in with_attached(i):
            unit_of[a] = ('table', te['id'])
for e in entries:
    if e['type'] == 'TABLE':
        k = ('table', e['id'])
        units[k]['members'][:0] = with_attached(e['id'])
        for a in with_attached(e['id']):
            unit_of[a] = k
for e in entries:
    i = e['id']
    if i in unit_of or e['type'] in ('ACL', 'COMMENT') and e.get('target'):
        continue
    t = e['type']
    if t in ('FUNCTION', 'PROCEDURE'):
        p = procs.get(e['oid'])
        users = trigger_users.get(e['oid'], set())
        if p and p['trigger'] and len(users) == 1:
            te = tables_by_oid[next(iter(users))]
            k = ('table', te['id'])
            units[k]['members'].extend(with_attached(i))
            for a in with_attached(i):
                unit_of[a] = k
            continue
        section = 4 if e['schema'] in ('api', 'control') else 5 if e['schema'] in ('skills', 'reporting') else 1
        new_unit(('fn', i), 'function', e['area'], with_attached(i))
        units[('fn', i)]['section'] = section
    elif t == 'VIEW':
        new_unit(('view', i), 'view', e['area'], with_attached(i))
    elif t in ('SCHEMA', 'TYPE', 'DOMAIN'):
        new_unit(('type', i), 'type', e['area'] or 'roles_and_schemas', with_attached(i))
    elif t == 'DEFAULT ACL' or (t == 'ACL' and not e.get('target')):
        new_unit(('acl', i), 'acl', 'roles_and_schemas', [i])
    else:
        raise SystemExit(f'no unit for {t} {e["schema"]} {e["name"]}')
missing = [e for e in entries if e['id'] not in unit_of]
assert not missing, [(e['type'], e['name']) for e in missing[:5]]
SECTION = dict(type=0, acl=0, function=1, table=2, view=3)
for u in units.values():
    u.setdefault('section', SECTION[u['kind']])

def split_fk(fk_id):
    """An FK constraint out of its table's unit, into one of its own (after the table it references)."""
    src = unit_of[fk_id]
    mem = with_attached(fk_id)
    units[src]['members'] = [m for m in units[src]['members'] if m not in mem]
    new_unit(('fk', fk_id), 'fk', units[src]['area'], mem)
    units[('fk', fk_id)]['section'] = 2

def unit_deps():
    d = collections.defaultdict(set)
    for i, refs in deps.items():
        if i not in unit_of:
            continue
        for r in refs:
            if r in unit_of and unit_of[r] != unit_of[i]:
                d[unit_of[i]].add(unit_of[r])
    return d

# An FK to a table of a later area goes after that table.
aidx = {a: n for n, a in enumerate(AREAS)}
for e in entries:
    if e['type'] == 'FK CONSTRAINT':
        for r in deps.get(e['id'], ()):
            ru = unit_of.get(r)
            if ru and ru[0] == 'table' and ru != unit_of[e['id']] and aidx[units[ru]['area']] > aidx[units[unit_of[e['id']]]['area']]:
                split_fk(e['id'])
                break

def order():
    ud = unit_deps()
    # Own priority: area, section, then the dump's order (alphabetical) for tables placed by their keys.
    first = {}
    for n, e in enumerate(entries):
        first.setdefault(unit_of[e['id']], n)
    own = {k: (aidx[u['area']], u['section'], first[k]) for k, u in units.items()}
    eff = dict(own)
    # Helpers move up to the first unit that needs them.
    changed = True
    rdeps = collections.defaultdict(set)
    for k, ds in ud.items():
        for d in ds:
            rdeps[d].add(k)
    while changed:
        changed = False
        for k, u in units.items():
            if u['kind'] in ('function', 'type') and u['section'] <= 1 or u['kind'] == 'fk':
                for r in rdeps[k]:
                    cand = (eff[r][0], min(eff[r][1], u['section']) if u['kind'] != 'fk' else eff[r][1], eff[r][2] - 0.5)
                    if cand < eff[k]:
                        eff[k] = cand
                        changed = True
    import heapq
    indeg = {k: len(ud[k]) for k in units}
    heap = [(eff[k], str(k), k) for k in units if indeg[k] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        _, _, k = heapq.heappop(heap)
        out.append(k)
        for r in rdeps[k]:
            indeg[r] -= 1
            if indeg[r] == 0:
                heapq.heappush(heap, (eff[r], str(r), r))
    stuck = [k for k in units if indeg[k] > 0]
    return out, stuck, eff, ud

for attempt in range(20):
    out, stuck, eff, ud = order()
    if not stuck:
        break
    # Break cycles through FKs inside the stuck units.
    split = 0
    for k in stuck:
        for m in list(units[k]['members']):
            if byid[m]['type'] == 'FK CONSTRAINT' and unit_of[m] == k:
                if any(unit_of.get(r) in stuck and unit_of.get(r) != k for r in deps.get(m, ())):
                    split_fk(m)
                    split += 1
    print('cycle among', len(stuck), 'units; split', split, 'keys')
    if not split:
        for k in stuck:
            print('  stuck:', k, [byid[m]['type'] + ' ' + byid[m]['name'] for m in units[k]['members'][:2]], [x for x in ud[k] if x in stuck][:3])
        raise SystemExit(1)
delayed = [k for k in out if units[k]['kind'] in ('table', 'view') and eff[k][0] != aidx[units[k]['area']]]
print(len(out), 'units in order;', len(delayed), 'tables or views out of their area')
json.dump(dict(out=[list(k) for k in out]), open('/tmp/squash/order.json', 'w'))

# ---- Text.
MEMBER_ORDER = {'TABLE': 0, 'COMMENT': 1, 'SEQUENCE': 2, 'DEFAULT': 3, 'CONSTRAINT': 4, 'INDEX': 5, 'FK CONSTRAINT': 6,
                'ROW SECURITY': 7, 'POLICY': 8, 'FUNCTION': 9, 'PROCEDURE': 9, 'TRIGGER': 10, 'ACL': 11}
def member_rank(m):
    e = byid[m]
    if e['type'] == 'COMMENT':
        tgt = byid[e['target']]
        return (MEMBER_ORDER[tgt['type']], tgt['id'] if tgt['type'] not in ('TABLE',) else -1, 1)
    if e['type'] == 'ACL':
        return (11, e['id'], 0)
    return (MEMBER_ORDER.get(e['type'], 12), e['id'] if e['type'] != 'TABLE' else -1, 0)

def split_code(s):
    """(text, is_code) pieces: string literals, quoted identifiers and dollar-quoted bodies are not code."""
    out = []
    i = 0
    n = len(s)
    buf = ''
    while i < n:
        c = s[i]
        if c == "'":
            j = i + 1
            while True:
                j = s.index("'", j)
                if j + 1 < n and s[j + 1] == "'":
                    j += 2
                    continue
                break
            out.append((buf, True)); buf = ''
            out.append((s[i:j + 1], False)); i = j + 1
        elif c == '"':
            j = s.index('"', i + 1)
            out.append((buf, True)); buf = ''
            out.append((s[i:j + 1], False)); i = j + 1
        elif c == '$' and re.match(r'\$[A-Za-z_]*\$', s[i:]):
            tag = re.match(r'\$[A-Za-z_]*\$', s[i:])[0]
            j = s.index(tag, i + len(tag)) + len(tag)
            out.append((buf, True)); buf = ''
            out.append((s[i:j], False)); i = j
        elif c == '-' and s.startswith('--', i):
            j = s.find('\n', i)
            j = n if j < 0 else j
            out.append((buf, True)); buf = ''
            out.append((s[i:j], False)); i = j
        else:
            buf += c
            i += 1
    out.append((buf, True))
    return out

def lower_keywords(s):
    res = []
    for text, code in split_code(s):
        if code:
            text = re.sub(r'\b[A-Z][A-Z_]*\b', lambda m: m[0].lower(), text)
        res.append(text)
    return ''.join(res)

def tidy(e):
    from gen_text import tidy_text
    b = tidy_text(e['body'])
    if e['type'] == 'VIEW':
        b = re.sub(r'^alter table (\S+) owner to', r'alter view \1 owner to', b, flags=re.M)
    return b

def balanced(s):
    d = 0
    for text, code in split_code(s):
        if not code:
            continue
        for c in text:
            d += (c == '(') - (c == ')')
            if d < 0:
                return False
    return d == 0

def label(k):
    u = units[k]
    e = byid[u['members'][0]]
    kind = {'table': 'table', 'view': 'view', 'function': 'function', 'type': e['type'].lower(), 'acl': 'privileges', 'fk': 'foreign key'}[u['kind']]
    if u['kind'] == 'function' and e['type'] == 'PROCEDURE':
        kind = 'procedure'
    name = qualified(e) if u['kind'] not in ('acl', 'fk') else (f"{e['schema']}.{e['name']}" if u['kind'] == 'fk' else e['name'])
    return f'-- {kind} {name}'

SEEDS = ['app_private.context_keys', 'app_private.currencies', 'app_private.event_types', 'app_private.report_definitions',
         'app_private.agent_skills', 'app_private.agent_definitions', 'app_private.run_wake_key']
files = collections.defaultdict(list)
cur = 0
for k in out:
    a = eff[k][0]
    cur = max(cur, a)
    files[AREAS[cur]].append(k)
json.dump({a: [label(k) for k in ks] for a, ks in files.items()}, open('/tmp/squash/files.json', 'w'), indent=1)
os.makedirs(OUT, exist_ok=True)
for a, ks in files.items():
    chunks = []
    for k in ks:
        mem = sorted(units[k]['members'], key=member_rank) if units[k]['kind'] == 'table' else units[k]['members']
        chunks.append(label(k) + '\n\n' + '\n\n'.join(tidy(byid[m]) for m in mem if tidy(byid[m]).strip()))
        if label(k) == '-- function api.service_schema_version()':
            chunks[-1] += "\n\n-- dbmate's record of the migrations, made before the first one runs.\ngrant select on table public.schema_migrations to svc_gate;"
    # The reference rows, after the area's tables (a trigger of one table reads another's rows).
    for t in SEEDS:
        if any(units[k]['kind'] == 'table' and qualified(byid[units[k]['members'][0]]) == t for k in ks):
            chunks.append(f'-- rows of {t}\n\n' + open(f'/tmp/squash/seeds/{t}.sql').read().strip('\n'))
    open(f'{OUT}/{a}.body.sql', 'w').write('\n\n'.join(chunks) + '\n')
    print(a, len(ks), 'units')
