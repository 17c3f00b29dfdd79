"""Which schema objects a SQL script defines and which it changes, read from its text.

``statements(text)`` splits a script the way psql runs it (strings, quoted identifiers, dollar
quoting and comments respected; psql's backslash commands left out). ``touches(text)`` names, for
each statement, the object it defines (``create``) or changes (``alter``, ``drop``, ``comment``,
``grant``/``revoke`` on it, or ``create or replace`` of an object made elsewhere):

* functions and procedures, by schema-qualified name and input argument types
  (``function ai.claim_job(text,interval,text)``); a ``drop``/``alter``/``comment`` naming a
  function without its arguments stands for every function of that name;
* tables (``alter table`` of any kind, comments on their columns and constraints), views, types
  and domains (one namespace), indexes (qualified with their table's schema), triggers and policies
  (by table and name).

What it does not see: statements built at run time inside ``do`` blocks and functions
(``execute format(...)``); the catalog comparisons of the schema tests cover those.

``offenders(units)`` applies the one-definition rule of CONTRIBUTING.md to a list of named scripts
in plan order (deploy files, or the sections of the bundle).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")


def statements(text: str) -> list[str]:
    """The statements of a script, with comments removed, string literals replaced by ``''``,
    dollar-quoted bodies by ``$$$$``, whitespace collapsed and lower case outside quoted
    identifiers."""
    out: list[str] = []
    buf: list[str] = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "\\" and not "".join(buf).strip():
            # a psql meta-command (\i, \set ...): to the end of the line
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        at_line_start = c == "\n"
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            buf.append(" ")
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            buf.append(" ")
        elif c == "'":
            escaped = i > 0 and text[i - 1] in "eE" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_"))
            i += 1
            while i < n:
                if escaped and text[i] == "\\":
                    i += 2
                    continue
                if text[i] == "'":
                    if text.startswith("''", i):
                        i += 2
                        continue
                    break
                i += 1
            i += 1
            buf.append("''")
        elif c == '"':
            end = text.find('"', i + 1)
            while end >= 0 and text.startswith('""', end):
                end = text.find('"', end + 2)
            end = n if end < 0 else end
            buf.append("\x00" + text[i : end + 1] + "\x00")  # kept as written (case matters)
            i = end + 1
        elif (
            c == "$" and (m := _DOLLAR.match(text, i)) and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            close = text.find(m.group(0), m.end())
            i = n if close < 0 else close + len(m.group(0))
            buf.append(" $$$$ ")
        elif c == ";":
            out.append(_normalize("".join(buf)))
            buf = []
            i += 1
        else:
            buf.append(c)
            i += 1
    last = _normalize("".join(buf))
    if last:
        out.append(last)
    return [s for s in out if s]


def _normalize(statement: str) -> str:
    parts = statement.split("\x00")
    # even parts are plain text, odd ones quoted identifiers
    text = "".join(p if k % 2 else p.lower() for k, p in enumerate(parts))
    return re.sub(r"\s+", " ", text).strip()


_TYPE_ALIASES = {
    "int": "integer",
    "int4": "integer",
    "int8": "bigint",
    "int2": "smallint",
    "bool": "boolean",
    "float8": "double precision",
    "float4": "real",
    "varchar": "character varying",
    "timestamptz": "timestamp with time zone",
    "timestamp": "timestamp without time zone",
    "timetz": "time with time zone",
    "decimal": "numeric",
    "char": "character",
}
_MULTIWORD = re.compile(
    r"^(double precision|character varying|bit varying|timestamp (with|without) time zone|time (with|without) time zone"
    r"|interval (year|month|day|hour|minute|second)( to (month|hour|minute|second))?)"
)
_MODES = ("inout ", "in ", "out ", "variadic ")


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _arg_type(arg: str) -> str | None:
    """The type of one argument of a signature; None for an OUT argument (not part of the identity)."""
    arg = arg.strip()
    mode = ""
    for m in _MODES:
        if arg.startswith(m):
            mode, arg = m.strip(), arg[len(m) :]
            break
    if mode == "out":
        return None
    arg = re.split(r"\s+default\s+|\s*=\s*", arg, maxsplit=1)[0].strip()
    words = arg.split(" ")
    if len(words) > 1 and not _MULTIWORD.match(arg):
        arg = " ".join(words[1:])  # the first word is the argument's name
    return _type_name(arg)


def _type_name(t: str) -> str:
    t = re.sub(r"^pg_catalog\.", "", t.strip())
    t = re.sub(r"\s*\(\s*[0-9, ]*\)", "", t)  # typmods are not part of a signature
    array = ""
    while t.endswith("[]"):
        t, array = t[:-2].strip(), array + "[]"
    return _TYPE_ALIASES.get(t, t) + array


def _signature(args: str) -> str:
    return ",".join(t for t in (_arg_type(a) for a in _split_top(args)) if t is not None)


def _paren(text: str, start: int) -> tuple[str, int]:
    """The text inside the parenthesis that opens at ``start``, and the index after it closes."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1 : k], k + 1
    return text[start + 1 :], len(text)


_NAME = r'((?:[a-z_][a-z_0-9$]*|"[^"]+")(?:\.(?:[a-z_][a-z_0-9$]*|"[^"]+"))?)'


def _qualified(name: str, schema: str = "public") -> str:
    return name if "." in name else f"{schema}.{name}"


def _routines(text: str) -> list[str]:
    """``name(args), name(args)`` or ``name`` lists of drop/grant/comment statements."""
    found = []
    for item in _split_top(text):
        m = re.match(_NAME + r"\s*(\()?", item)
        if not m:
            continue
        if m.group(2):
            args, _ = _paren(item, m.end(2) - 1)
            found.append(f"function {_qualified(m.group(1))}({_signature(args)})")
        else:
            found.append(f"function {_qualified(m.group(1))}")
    return found


_KIND = {
    "table": "table",
    "view": "relation",
    "materialized view": "relation",
    "type": "type",
    "domain": "type",
    "index": "index",
    "sequence": "sequence",
}


@dataclass(frozen=True)
class Touch:
    """One statement's effect on one object: ``created`` (create, or create or replace) or not."""

    obj: str
    created: bool
    replace: bool
    statement: str


def touches(text: str) -> list[Touch]:
    """What each statement of a script defines or changes (see the module's docstring)."""
    found: list[Touch] = []
    for s in statements(text):
        short = s[:160]

        def add(obj: str, created: bool = False, replace: bool = False, short: str = short) -> None:
            found.append(Touch(obj, created, replace, short))

        if m := re.match(r"create (or replace )?(function|procedure) " + _NAME + r"\s*\(", s):
            args, _ = _paren(s, m.end() - 1)
            add(f"function {_qualified(m.group(3))}({_signature(args)})", True, bool(m.group(1)))
        elif m := re.match(
            r"create (or replace )?(temp |temporary )?(recursive )?(materialized )?view (if not exists )?" + _NAME, s
        ):
            add(f"relation {_qualified(m.group(6))}", True, bool(m.group(1)))
        elif m := re.match(r"create (unlogged |temp |temporary )?table (if not exists )?" + _NAME, s):
            add(f"relation {_qualified(m.group(3))}", True)
        elif m := re.match(
            r"create (unique )?index (concurrently )?(if not exists )?(" + _NAME[1:-1] + r" )?on (only )?" + _NAME, s
        ):
            table = _qualified(m.group(6))
            if m.group(4):
                add(f"index {_qualified(m.group(4).strip(), table.split('.')[0])}", True)
        elif m := re.match(r"create (or replace )?(constraint )?trigger " + _NAME + r" .*? on " + _NAME, s):
            add(f"trigger {_qualified(m.group(4))}.{m.group(3)}", True, bool(m.group(1)))
        elif m := re.match(r"create policy " + _NAME + r" on " + _NAME, s):
            add(f"policy {_qualified(m.group(2))}.{m.group(1)}", True)
        elif m := re.match(r"create (type|domain) " + _NAME, s):
            add(f"type {_qualified(m.group(2))}", True)
        elif m := re.match(r"create sequence (if not exists )?" + _NAME, s):
            add(f"sequence {_qualified(m.group(2))}", True)
        elif m := re.match(r"alter table (if exists )?(only )?" + _NAME, s):
            add(f"relation {_qualified(m.group(3))}")
        elif m := re.match(r"alter (function|procedure|routine) " + _NAME, s):
            for obj in _routines(s[m.start(2) :]):
                add(obj)
                break
        elif m := re.match(r"alter (view|materialized view|type|domain|index|sequence) (if exists )?" + _NAME, s):
            add(f"{_KIND[m.group(1)].replace('table', 'relation')} {_qualified(m.group(3))}")
        elif m := re.match(r"(alter|drop) (trigger|policy) (if exists )?" + _NAME + r" on " + _NAME, s):
            add(f"{m.group(2)} {_qualified(m.group(5))}.{m.group(4)}")
        elif m := re.match(r"drop (function|procedure|routine) (if exists )?(.*?)( cascade| restrict)?$", s):
            for obj in _routines(m.group(3)):
                add(obj)
        elif m := re.match(
            r"drop (table|view|materialized view|type|domain|index|sequence) (concurrently )?(if exists )?"
            r"(.*?)( cascade| restrict)?$",
            s,
        ):
            kind = _KIND[m.group(1)].replace("table", "relation")
            for name in _split_top(m.group(4)):
                add(f"{kind} {_qualified(name)}")
        elif m := re.match(r"comment on (function|procedure|routine) (.*?) is ", s):
            for obj in _routines(m.group(2)):
                add(obj)
        elif m := re.match(
            r"comment on (table|view|materialized view|type|domain|index|sequence) " + _NAME + " is ", s
        ):
            add(f"{_KIND[m.group(1)].replace('table', 'relation')} {_qualified(m.group(2))}")
        elif m := re.match(r"comment on column " + _NAME + r"\.[a-z_0-9]+ is ", s):
            add(f"relation {_qualified(m.group(1))}")
        elif m := re.match(r"comment on (trigger|policy) " + _NAME + " on " + _NAME + " is ", s):
            add(f"{m.group(1)} {_qualified(m.group(3))}.{m.group(2)}")
        elif m := re.match(r"comment on constraint " + _NAME + " on (domain )?" + _NAME + " is ", s):
            add(f"{'type' if m.group(2) else 'relation'} {_qualified(m.group(3))}")
        elif m := re.match(r"(grant|revoke) .*? on (function|procedure|routine)s? (.*?) (to|from) ", s):
            if not s.startswith(("grant all ", "revoke all ")) or " in schema " not in s:
                for obj in _routines(m.group(3)):
                    add(obj)
        elif (m := re.match(r"(grant|revoke) .*? on (table )?(.*?) (to|from) ", s)) and not (
            " in schema " in m.group(3) or re.match(r"(schema|database|sequence|type|domain|language) ", m.group(3))
        ):
            for name in _split_top(m.group(3)):
                if re.fullmatch(_NAME, name):
                    add(f"relation {_qualified(name)}")
    return found


def _same(a: str, b: str) -> bool:
    """Whether two touched names are one object (a function named without arguments is every
    function of that name)."""
    if a == b:
        return True
    if a.startswith("function ") and b.startswith("function "):
        return a.split("(")[0] == b.split("(")[0] and ("(" not in a or "(" not in b)
    return False


def offenders(units: Sequence[tuple[str, str]], free_after: int | None = None) -> list[str]:
    """The one-definition rule over named scripts in plan order: each object is created once, by
    one script, and no other script changes it. ``free_after``: units from this index on are the
    changes planned after the release tag; they may alter, drop, comment on and grant on objects
    of earlier scripts (a table change names its reason), but not create an object made elsewhere
    (a function changes by ``sqitch rework`` of its own change). Returns one line per offending
    object: its name, then each script and what it did there."""
    by_obj: dict[str, list[tuple[int, str, Touch]]] = {}
    for index, (unit, text) in enumerate(units):
        for t in touches(text):
            key = t.obj.split("(")[0] if t.obj.startswith("function ") and "(" not in t.obj else t.obj
            by_obj.setdefault(key, []).append((index, unit, t))
    # a function named without arguments joins the entries of the functions of that name
    for key in [k for k in by_obj if k.startswith("function ") and "(" not in k]:
        matches = [k for k in by_obj if k != key and _same(k, key)]
        for k in matches:
            by_obj[k].extend(by_obj[key])
        if matches:
            del by_obj[key]
    lines = []
    for obj, uses in sorted(by_obj.items()):
        creations = [u for u in uses if u[2].created]
        if not creations:
            continue  # an object of another project (pg_catalog, a role's table): not ours to judge
        home = creations[0][0]
        bad = len(creations) > 1 or any(
            index != home and (free_after is None or index < free_after or t.created) for index, _, t in uses
        )
        if bad:
            actions: dict[str, list[str]] = {}
            for _, unit, t in sorted(uses, key=lambda u: u[0]):
                verb = "create or replace" if t.replace else "create" if t.created else t.statement.split(" ")[0]
                if verb not in actions.setdefault(unit, []):
                    actions[unit].append(verb)
            lines.append(f"{obj}: " + "; ".join(f"{unit} ({', '.join(verbs)})" for unit, verbs in actions.items()))
    return lines


@dataclass(frozen=True)
class PlanEntry:
    """A line of sqitch.plan: a change (``tag`` is None) or a tag (``change`` is the change it
    follows)."""

    change: str
    tag: str | None = None


def read_plan(text: str) -> list[PlanEntry]:
    """The changes and tags of a sqitch.plan, in order (a reworked change appears once per instance)."""
    entries: list[PlanEntry] = []
    for line in text.splitlines():
        if line[:1].isalpha():
            entries.append(PlanEntry(line.split()[0]))
        elif line.startswith("@"):
            entries.append(PlanEntry(entries[-1].change if entries else "", line.split()[0][1:]))
    return entries


def plan_units(plan_text: str, read: Callable[[str], str]) -> tuple[list[tuple[str, str]], int | None]:
    """Each change's current deploy script once, at its first place in the plan (the rework copies
    ``name@tag.sql`` are history, not definitions), and the index of the first change planned
    after the first tag (None without a tag)."""
    units: list[tuple[str, str]] = []
    free_after: int | None = None
    for entry in read_plan(plan_text):
        if entry.tag is not None:
            if free_after is None:
                free_after = len({u for u, _ in units})
            continue
        if entry.change not in {u for u, _ in units}:
            units.append((entry.change, read(entry.change)))
    return units, free_after
