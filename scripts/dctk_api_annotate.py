"""Mark a public header's declarations for export: every top-level function
declaration and extern variable that is not yet marked gets DCTK_API in front
(the libraries are built with hidden visibility; see include/dctk/api.h).

  python3 scripts/dctk_api_annotate.py include/dctk/NEW.h

Idempotent; static inline functions, typedefs and structs are left alone.
Lines pushed past 120 columns are left to rewrap by hand (or clang-format --lines).
tests/tools/packaging_check.py symbols checks the result after an install."""
import re, sys

def annotate(text):
    out_pos = []  # positions to insert at
    i, n = 0, len(text)
    depth = 0
    stmt_start = None
    line_start = True
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.index('*/', i) + 2; i = j; continue
        if text.startswith('//', i):
            i = text.index('\n', i); continue
        if line_start and c == '#':
            # preprocessor line (with continuations)
            while True:
                j = text.index('\n', i)
                if text[j-1] == '\\': i = j + 1; continue
                i = j; break
            continue
        if c == '\n':
            line_start = True; i += 1; continue
        if c in ' \t':
            i += 1; continue
        line_start = False
        if text.startswith('extern "C" {', i):
            i += len('extern "C" {'); continue
        if c == '"':
            j = i + 1
            while text[j] != '"': j += 2 if text[j] == '\\' else 1
            i = j + 1; continue
        if depth == 0 and stmt_start is None:
            stmt_start = i
        if c == '{': depth += 1
        elif c == '}':
            if depth == 0: stmt_start = None; i += 1; continue  # extern "C" close
            depth -= 1
            if depth == 0:
                # end of a body: a function definition (static inline) ends here
                k = i + 1
                while k < n and text[k] in ' \t': k += 1
                if k < n and text[k] == '\n': 
                    s = text[stmt_start:i]
                    if not re.match(r'\s*(typedef|struct|enum|union)\b', s): stmt_start = None
        elif c == ';' and depth == 0:
            s = text[stmt_start:i]
            flat = re.sub(r'/\*.*?\*/', '', s, flags=re.S)
            if not re.match(r'(typedef|static|struct\s+\w+\s*\{|enum|union|DCTK_API)\b', flat) and \
               ('(' in flat or flat.startswith('extern')):
                out_pos.append(stmt_start)
            stmt_start = None
        i += 1
    for p in reversed(out_pos):
        text = text[:p] + 'DCTK_API ' + text[p:]
    return text, len(out_pos)


def realign(text):
    """Continuation lines of a marked declaration that were aligned after its
    '(' move right with it."""
    lines, out, i = text.split('\n'), [], 0
    while i < len(lines):
        out.append(lines[i])
        first = lines[i]
        i += 1
        if first.startswith('DCTK_API ') and '(' in first and ';' not in first:
            col = first.index('(') + 1 - len('DCTK_API ')
            while i < len(lines):
                c = lines[i]
                out.append(' ' * len('DCTK_API ') + c if len(c) - len(c.lstrip(' ')) == col else c)
                i += 1
                if ';' in c:
                    break
    return '\n'.join(out)


for path in sys.argv[1:]:
    t = open(path).read()
    t2, k = annotate(t)
    t2 = realign(t2)
    open(path, 'w').write(t2)
    print(path, k)
