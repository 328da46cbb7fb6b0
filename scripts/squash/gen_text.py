import re
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

def tidy_text(b):
    b = re.sub(r'\n*ALTER [A-Z ]+ \S.* OWNER TO postgres;\n*', '\n', b).strip('\n')
    # Policies: a scalar subquery of an accessor, as written by hand.
    b = re.sub(r'\( SELECT ((?:app|app_private)\.[a-z_]+\([^()]*\)) AS [a-z_]+\)', r'(select \1)', b)
    b = re.sub(r'GRANT ALL ON FUNCTION', 'GRANT EXECUTE ON FUNCTION', b)
    b = re.sub(r'GRANT ALL ON PROCEDURE', 'GRANT EXECUTE ON PROCEDURE', b)
    b = b.replace('ALTER DEFAULT PRIVILEGES FOR ROLE postgres ', 'ALTER DEFAULT PRIVILEGES ')
    b = re.sub(r'\n{3,}', '\n\n', b)
    if b.startswith('CREATE POLICY'):
        b = re.sub(r'(USING|WITH CHECK) \(\((.*)\)\)', lambda m: f'{m[1]} ({m[2]})' if m[2].count('(') == m[2].count(')') and balanced(m[2]) else m[0], b, flags=re.S)
    # Written with BETWEEN, which PostgreSQL keeps nested (pg_dump's flat text would re-parse flat).
    for c in ('file_uploads_name_valid', 'ticket_messages_body_length', 'tickets_subject_length'):
        b = re.sub(r'(CONSTRAINT ' + c + r' CHECK \(\()\(\(length\((\w+)\) >= (\d+)\) AND \(length\(\2\) <= (\d+)\)\)', r'\1(length(\2) BETWEEN \3 AND \4)', b)
    b = lower_keywords(b)
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

