"""Classify one statement's outcome on PostgreSQL 15 and on mzspark (pure; no servers).

Classes (`Cls`):
- `same`: both succeeded with the same result (rows compared as PostgreSQL prints them), or
  both failed with the same SQLSTATE class (first two characters);
- `different`: both succeeded, results differ (rows, column count, or affected-row count);
- `internal`: mzspark failed with XX000, with a message that looks like a Python / Spark /
  py4j leak, timed out, or lost the connection (the server died);
- `unsupported`: mzspark raised 0A000 where PostgreSQL did something else;
- `other_error`: mzspark raised another error where PostgreSQL succeeded or raised an
  error of another class;
- `mz_ok_pg_error`: mzspark succeeded where PostgreSQL raised an error;
- `documented`: both succeeded and the results are equal once numeric values are compared
  with their trailing fractional zeros removed: Materialize trims every numeric's trailing
  zeros whatever its scale (its documented output rule, followed by mzspark), where
  PostgreSQL prints the display scale (`avg(int)` = `1.5000000000000000`) — also the decimal
  elements of records and numeric arrays (`(4,5,6.0)` = `(4,5,6)`: the rule is about the value,
  so it holds inside a container; a record's field types are not on the wire, so every decimal
  field of a record is read that way); or equal up to the
  element order of arrays from an array_agg without ORDER BY; or equal once PostgreSQL's
  JSON documents are printed as jsonb prints them, mzspark's being in that form already
  (Materialize has no text-preserving json type). mzspark's 10-digit numeric scale is NOT documented: a value rounded to 10
  fractional digits is `different`. Counted as the same outcome in the share and shown in a
  column of its own;
- `blocked`: the outcomes differ, but the statement depends on an earlier divergence: it names
  an object whose CREATE succeeded on one side only, or one side's transaction is aborted
  (25P02) and the other's is not. The divergence itself is counted where it happened;
- `na`: not applicable (reported apart): psql meta-commands, EXPLAIN, PostgreSQL features
  outside Materialize's surface (`NA_RULES`), statements that fail on PostgreSQL because
  the corpus lacks their setup (regress.so, create_misc, create_aggregate), and differing
  results of nondeterministic functions.

The share of "same" is taken over the statements that are neither `na` nor `blocked`.
"""

from __future__ import annotations

import decimal
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Cls(StrEnum):
    SAME = "same"
    DIFFERENT = "different"
    INTERNAL = "internal"
    UNSUPPORTED = "unsupported"
    OTHER_ERROR = "other_error"
    MZ_OK_PG_ERROR = "mz_ok_pg_error"
    DOCUMENTED = "documented"
    BLOCKED = "blocked"
    NA = "na"


@dataclass(frozen=True)
class Outcome:
    """One side's outcome: rows as text (None = NULL) or an error."""

    ok: bool
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str | None, ...], ...] = ()
    rowcount: int = -1
    has_rows: bool = False  # the statement returned a row description
    type_oids: tuple[int, ...] = ()  # result column types (PostgreSQL's side decides which are numeric)
    sqlstate: str = ""
    message: str = ""
    kind: str = ""  # "" | "timeout" | "crash" for mzspark failures of the runner's own

    def short(self, max_rows: int = 20) -> str:
        if not self.ok:
            k = f"[{self.kind}] " if self.kind else ""
            return f"{k}ERROR {self.sqlstate}: {self.message}"
        if not self.has_rows:
            return f"OK (rowcount {self.rowcount})"
        head = " | ".join(self.columns)
        body = ["(" + ", ".join("NULL" if v is None else repr(v) for v in r) + ")" for r in self.rows[:max_rows]]
        more = f"\n… {len(self.rows) - max_rows} more rows" if len(self.rows) > max_rows else ""
        return f"{len(self.rows)} rows [{head}]\n" + "\n".join(body) + more


@dataclass
class Verdict:
    cls: Cls
    reason: str = ""  # n/a reason, kind of difference, …
    details: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# not applicable: statements outside Materialize's surface (decided from the text alone)

_KINDS_OUTSIDE = (
    r"(?:or\s+replace\s+)?(?:trusted\s+)?(?:procedural\s+)?"
    r"(?:function|procedure|aggregate|operator|trigger|constraint\s+trigger|event\s+trigger|rule|"
    r"domain|sequence|type|extension|language|cast|collation|conversion|policy|publication|"
    r"subscription|statistics|text\s+search|foreign|server|user\s+mapping|tablespace|"
    r"access\s+method|role|user|group|transform)\b"
)

# (name, pattern) — the first match names the reason. Patterns see the statement with its
# leading comments stripped, lowercased, whitespace collapsed.
NA_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("EXPLAIN (PostgreSQL plan text)", re.compile(r"^explain\b")),
    ("DDL outside Materialize (functions, types, domains, sequences, triggers, rules, roles, …)",
     re.compile(r"^(create|drop|alter)\s+" + _KINDS_OUTSIDE)),
    ("table inheritance / partitioning", re.compile(r"^create\s+.*\b(inherits|partition\s+(of|by))\b")),
    ("table constraints (PRIMARY KEY, UNIQUE, CHECK, REFERENCES, EXCLUDE, GENERATED)",
     re.compile(r"^create\s+(temp\w*\s+|unlogged\s+)?table\b.*\b(primary\s+key|unique|check\s*\(|references|"
                r"foreign\s+key|exclude|generated\s+(always|by))\b")),
    ("CREATE TABLE AS / SELECT INTO / CREATE TABLE (LIKE)",
     re.compile(r"^(create\s+(temp\w*\s+|unlogged\s+)?table\b[^(]*\bas\b|create\s+(temp\w*\s+|unlogged\s+)?table\b"
                r"[^(]*\(\s*like\b|select\b(?:(?!\bfrom\b).)*\binto\b)")),
    ("ALTER TABLE/VIEW/INDEX other than RENAME",
     re.compile(r"^alter\s+(table|view|index|materialized\s+view)\b(?!.*\brename\b)")),
    ("PostgreSQL-only index kinds (UNIQUE, USING, WHERE, INCLUDE, CONCURRENTLY)",
     re.compile(r"^create\s+(unique\s+index|index\b.*\b(using|where|include|concurrently)\b)")),
    ("ALTER DATABASE / SYSTEM / DEFAULT PRIVILEGES / OWNER",
     re.compile(r"^alter\s+(database|system|default\s+privileges)\b|\bowner\s+to\b")),
    ("maintenance and privileges (VACUUM, ANALYZE, CLUSTER, REINDEX, GRANT, REVOKE, LOCK, COMMENT, …)",
     re.compile(r"^(vacuum|analyze|analyse|cluster|reindex|checkpoint|grant|revoke|lock|comment\s+on|"
                r"security\s+label|listen|notify|unlisten|load|refresh\s+materialized\s+view|reassign|"
                r"import\s+foreign)\b")),
    ("procedural code (DO, CALL)", re.compile(r"^(do|call)\b")),
    ("savepoints and two-phase commit",
     re.compile(r"^(savepoint|release|rollback\s+(work\s+|transaction\s+)?to|prepare\s+transaction|"
                r"commit\s+prepared|rollback\s+prepared)\b")),
    ("SET ROLE / SESSION AUTHORIZATION / CONSTRAINTS, DISCARD",
     re.compile(r"^(set\s+(local\s+|session\s+)?(role|session\s+authorization|constraints)|reset\s+role|"
                r"reset\s+session\s+authorization|discard)\b")),
    ("PostgreSQL-only SET (planner, memory, locale, …)", re.compile(r"^(set\s+(local\s+|session\s+)?|reset\s+)(?!"
     r"(search_path|time\s*zone|timezone|datestyle|intervalstyle|extra_float_digits|bytea_output|client_encoding|"
     r"standard_conforming_strings|application_name|statement_timeout|transaction|all)\b)")),
    ("INSERT … ON CONFLICT / row locking / cursors on tables (FOR UPDATE, WHERE CURRENT OF)",
     re.compile(r"\bon\s+conflict\b|\bfor\s+(no\s+key\s+)?(update|share|key\s+share)\b(?!\s*\w+\s*=)"
                r"|\bwhere\s+current\s+of\b")),
    ("TABLESAMPLE", re.compile(r"\btablesample\b")),
    ("WITH RECURSIVE … SEARCH / CYCLE clauses (not in Materialize)",
     re.compile(r"\)\s*(search\s+(depth|breadth)\s+first\s+by\b|cycle\s+[\w\",\s]+?\s+set\s+[\w\"]+\s+(to|using)\b)")),
    ("data-modifying statements in WITH (not in Materialize)",
     re.compile(r"^with\b.*\bas\s+(not\s+)?(materialized\s+)?\(\s*(insert|update|delete|merge)\b")),
    ("PostgreSQL's aggregate support functions (transition / combine: float8_accum, …), not in Materialize",
     re.compile(r"\b(float[48]|int[248]|numeric|interval)_(regr_)?(accum|combine)\s*\(|\bbool(and|or)_statefunc\s*\(")),
    ("view check options / recursive views",
     re.compile(r"^create\s+(or\s+replace\s+)?(temp\w*\s+)?recursive\s+view\b|\bwith\s+(cascaded\s+|local\s+)?"
                r"check\s+option\b|^create\b.*\bview\b.*\bwith\s*\(")),
]

_LEADING_COMMENTS = re.compile(r"^(\s+|--[^\n]*\n?|/\*.*?\*/)+", re.S)


def normalize(sql: str) -> str:
    """Leading comments stripped, whitespace collapsed, lowercased, string literals emptied."""
    s = _LEADING_COMMENTS.sub("", sql)
    s = re.sub(r"'(?:[^']|'')*'", "''", s)
    return re.sub(r"\s+", " ", s).strip().lower()


def static_na(sql: str) -> str | None:
    """The reason a statement is outside the comparison, decided from its text; None if it is in."""
    s = normalize(sql)
    for reason, pat in NA_RULES:
        if pat.search(s):
            return reason
    return None


# Objects the collected scripts use but the corpus never creates (README: regress.so,
# create_misc, create_aggregate); PostgreSQL errors on them are n/a.
MISSING_SETUP = re.compile(
    r"\b(regress\.so|/regress|[a-f]_star|newavg|newsum|newcnt|oldcnt|sum2|least_agg|cleast_agg|aggfns|"
    r"aggfstr|test_rank|test_percentile_disc|agg_view1|interpt_pp|iexit|binary_coercible|ttdummy|"
    r"get_columns_length)\b",
    re.I,
)

NONDETERMINISTIC = re.compile(
    r"\b(random|setseed|now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|"
    r"current_timestamp|current_time|localtime|localtimestamp|current_date|pg_backend_pid|version|"
    r"txid_current\w*|pg_current_xact_id\w*|gen_random_uuid|inet_client_\w+|pg_postmaster_start_time|"
    r"current_user|session_user|user|current_role|current_database|current_catalog|current_schema|"
    r"pg_my_temp_schema|oid|ctid|xmin|xmax|tableoid|regclass|pg_typeof|pg_column_size|"
    r"pg_relation_size|pg_total_relation_size|pg_\w+)\b",
    re.I,
)

# ---------------------------------------------------------------------------------------------
# internal errors

INTERNAL_STATES = {"XX000", "XX001", "XX002"}
LEAK = re.compile(
    r"Traceback|py4j|pyspark|org\.apache\.|java\.|scala\.|\b[A-Z][A-Za-z]*(Error|Exception)\b|"
    r"object has no attribute|NoneType|not subscriptable|unhashable type|positional argument|"
    r"keyword argument|unsupported operand type|object is not (callable|iterable)|"
    r"index out of range|invalid literal for int|too many values to unpack|not enough values to unpack|"
    r"sqlglot|\.py\b|line \d+, in |<class |\bexp\.[A-Z]|'[A-Z][A-Za-z]+' object|\bdict_\w+\(|"
    r"maximum recursion depth|can't (multiply|concatenate|convert)|must be str|must be real number",
)


def is_internal(o: Outcome) -> bool:
    if o.ok:
        return False
    return bool(o.kind) or o.sqlstate in INTERNAL_STATES or bool(LEAK.search(o.message))


# ---------------------------------------------------------------------------------------------
# result comparison


def _scan_depth0(sql: str) -> list[tuple[int, str]]:
    """(position, lowercased word) of every word at parenthesis depth 0, outside literals,
    quoted identifiers and comments."""
    out: list[tuple[int, str]] = []
    i, n, depth = 0, len(sql), 0
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "'" or c == '"':
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                if sql[j] == "\\" and c == "'" and i > 0 and sql[i - 1] in "eE":
                    j += 1
                j += 1
            i = j + 1
            continue
        if c == "$":
            m = re.match(r"\$([A-Za-z_]\w*)?\$", sql[i:])
            if m:
                j = sql.find(m.group(0), i + len(m.group(0)))
                i = n if j < 0 else j + len(m.group(0))
                continue
        if c == "(" or c == "[":
            depth += 1
        elif c == ")" or c == "]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append((i, ","))
        elif (c.isalpha() or c == "_") and depth == 0:
            m = re.match(r"[A-Za-z_][A-Za-z0-9_$]*", sql[i:])
            assert m
            out.append((i, m.group(0).lower()))
            i += len(m.group(0))
            continue
        i += 1
    return out


_ORDER_END = {"limit", "offset", "fetch", "for"}


def order_by_keys(sql: str) -> list[str] | None:
    """The top-level ORDER BY's key expressions (text), or None when there is none.
    (A statement ending in `ORDER BY` inside a parenthesised query is not top-level.)"""
    s = _LEADING_COMMENTS.sub("", sql)
    words = _scan_depth0(s)
    start = None
    for k in range(len(words) - 1):
        if words[k][1] == "order" and words[k + 1][1] == "by":
            start = k + 2
    if start is None:
        return None
    # keys run to the first LIMIT/OFFSET/FETCH/FOR at depth 0 after ORDER BY
    begin = words[start - 1][0] + 2
    end = len(s)
    for pos, w in words[start:]:
        if w in _ORDER_END:
            end = pos
            break
    body = s[begin:end].strip().rstrip(";")
    keys, cur, depth, i = [], [], 0, 0
    for ch in body:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            keys.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    keys.append("".join(cur).strip())
    return [_strip_direction(k) for k in keys if k]


def _strip_direction(key: str) -> str:
    k = re.sub(r"(?i)\s+nulls\s+(first|last)\s*$", "", key.strip())
    k = re.sub(r"(?i)\s+(asc|desc)\s*$", "", k)
    k = re.sub(r"(?i)\s+using\s+\S+\s*$", "", k)
    return k.strip()


def _squash(e: str) -> str:
    return re.sub(r"\s+", "", e).lower()


def select_items(sql: str) -> list[str] | None:
    """The expressions of the first top-level select list (without `AS alias`), as written;
    None for a statement not starting with SELECT."""
    s = _LEADING_COMMENTS.sub("", sql)
    words = _scan_depth0(s)
    if not words or words[0][1] != "select":
        return None
    start = words[0][0] + len("select")
    if len(words) > 1 and words[1][1] in ("all", "distinct") and not (words[1][1] == "distinct" and len(words) > 2 and words[2][1] == "on"):
        start = words[1][0] + len(words[1][1])
    ends = [pos for pos, w in words[1:] if w in ("from", "where", "group", "having", "window", "order", "limit",
                                                 "union", "intersect", "except", "into", "offset", "fetch")]
    end = ends[0] if ends else len(s.rstrip().rstrip(";"))
    commas = [pos for pos, w in words if w == "," and start <= pos < end]
    items, prev = [], start
    for pos in [*commas, end]:
        item = s[prev:pos].strip()
        item = re.sub(r"(?i)\s+as\s+(\w+|\"[^\"]+\")$", "", item)
        items.append(item)
        prev = pos + 1
    return items


def key_columns(keys: list[str], columns: tuple[str, ...], items: list[str] | None = None) -> list[int] | None:
    """Output column index of each ORDER BY key (position, output name, a qualified column
    whose last part is an output name, or an expression written as a select-list item is);
    None when some key is another expression."""
    lowered = [c.lower() for c in columns]
    written = [_squash(i) for i in items] if items is not None and len(items) == len(columns) else []
    out = []
    for k in keys:
        if _squash(k) in written and written.count(_squash(k)) == 1:
            out.append(written.index(_squash(k)))
            continue
        if re.fullmatch(r"\d+", k):
            idx = int(k) - 1
            if not 0 <= idx < len(columns):
                return None
            out.append(idx)
            continue
        m = re.fullmatch(r'(?:(?:"[^"]+"|\w+)\.)*("([^"]+)"|(\w+))', k)
        if not m:
            return None
        name = m.group(2) if m.group(2) is not None else m.group(3).lower()
        if name not in lowered and name.lower() not in lowered:
            return None
        out.append(lowered.index(name) if name in lowered else lowered.index(name.lower()))
    return out


def compare_rows(sql: str, pg: Outcome, mz: Outcome) -> str | None:
    """None when both results are the same, else what differs."""
    if pg.has_rows != mz.has_rows:
        return "one side returned rows, the other a command status"
    if not pg.has_rows:
        if pg.rowcount != mz.rowcount and pg.rowcount >= 0 and mz.rowcount >= 0:
            return f"affected rows {pg.rowcount} vs {mz.rowcount}"
        return None
    if len(pg.columns) != len(mz.columns):
        return f"column count {len(pg.columns)} vs {len(mz.columns)}"
    if pg.rows == mz.rows:
        return None
    if Counter(pg.rows) != Counter(mz.rows):
        return "rows differ" if len(pg.rows) == len(mz.rows) else f"row count {len(pg.rows)} vs {len(mz.rows)}"
    keys = order_by_keys(sql)
    if keys is None:
        return None  # no top-level ORDER BY: multisets are equal
    cols = key_columns(keys, pg.columns, select_items(sql))
    if cols is None:
        return "order (ORDER BY on expressions; ties not checkable)"
    if _same_up_to_ties(pg.rows, mz.rows, cols):
        return None
    return "order"


NUMERIC_OID = 1700


def _trim_zeros(v: str | None) -> str | None:
    """A numeric's text without trailing fractional zeros ('1.50' -> '1.5', '2.000' -> '2')."""
    if v is None or "." not in v or "e" in v.lower():
        return v
    v = v.rstrip("0")
    return v[:-1] if v.endswith(".") else v


# numeric[] and record / record[]; an OID from 16384 up is a type the session created (a table's
# row type, an anonymous composite): their text may hold numeric fields whose types the wire
# protocol does not name.
NUMERIC_ARRAY_OID, RECORD_OID, RECORD_ARRAY_OID, FIRST_USER_OID = 1231, 2249, 2287, 16384

# a decimal number as a whole element of an array or field of a record: between two of the
# delimiters `{ } ( ) ,` and `"` (or the ends of the text)
_ELEMENT_DECIMAL = re.compile(r'(?<=[{}(),"])(-?\d+)\.(\d*?)0+(?=[{}(),"])')


def _trim_element_zeros(v: str | None) -> str | None:
    """A record's or array's text with every decimal element's trailing fractional zeros removed
    ('(4,5,6.0)' -> '(4,5,6)', '{1.50,2.00}' -> '{1.5,2}')."""
    if v is None:
        return v
    return _ELEMENT_DECIMAL.sub(lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), v)


def is_numeric_container(oid: int) -> bool:
    return oid in (NUMERIC_ARRAY_OID, RECORD_OID, RECORD_ARRAY_OID) or oid >= FIRST_USER_OID


def trimmed(o: Outcome, numeric_cols: Sequence[int], container_cols: Sequence[int] = ()) -> Outcome:
    """`o` with its numeric columns' trailing fractional zeros removed, and those of the decimal
    elements of its records and numeric arrays (Materialize's rule is about the value, so it
    holds inside a container as at the top level)."""

    def trim(i: int, v: str | None) -> str | None:
        if i in numeric_cols:
            return _trim_zeros(v)
        return _trim_element_zeros(v) if i in container_cols else v

    rows = tuple(tuple(trim(i, v) for i, v in enumerate(r)) for r in o.rows)
    return Outcome(o.ok, o.columns, rows, o.rowcount, o.has_rows, o.type_oids)


# array_agg( … ) with no ORDER BY inside its parentheses (one level of nesting)
_UNORDERED_ARRAY_AGG = re.compile(r"\barray_agg\s*\((?:[^()]|\([^()]*\))*\)", re.I)
_ORDER_BY = re.compile(r"\border\s+by\b", re.I)


def has_unordered_array_agg(sql: str) -> bool:
    return any(not _ORDER_BY.search(m.group(0)) for m in _UNORDERED_ARRAY_AGG.finditer(sql))


def _elements_sorted(o: Outcome) -> Outcome:
    """`o` with the elements of every one-dimensional array value sorted: array_agg without an
    ORDER BY of its own aggregates in an unspecified order (Materialize ignores a subquery's
    ORDER BY, where PostgreSQL's executor happens to keep it)."""
    from sql.text_input import split_array_text
    from sql.types import SqlType

    def sort(v: str | None) -> str | None:
        if v is None or not (v.startswith("{") and v.endswith("}")) or "{" in v[1:-1]:
            return v
        try:
            items = split_array_text(v, SqlType("_text"))
        except Exception:  # not an array literal after all
            return v
        return "{" + ",".join(sorted("NULL" if x is None else str(x) for x in items)) + "}"

    rows = tuple(tuple(sort(v) for v in r) for r in o.rows)
    return Outcome(o.ok, o.columns, rows, o.rowcount, o.has_rows, o.type_oids)


def numeric_columns(pg: Outcome) -> list[int]:
    return [i for i, t in enumerate(pg.type_oids) if t == NUMERIC_OID]


def container_columns(pg: Outcome) -> list[int]:
    return [i for i, t in enumerate(pg.type_oids) if is_numeric_container(t)]


def jsonb_text(v: str | None) -> str | None:
    """A JSON document's text as jsonb prints it (PostgreSQL's jsonb_out: duplicate keys last
    wins, keys ordered by length then bytes, `", "` / `": "` separators, numbers as numeric);
    `v` unchanged when it is not a JSON document. Materialize documents that it has no type
    like PostgreSQL's `json` (which keeps the input text): `json` is read as jsonb."""
    if v is None:
        return v
    try:
        doc = json.loads(v, parse_float=decimal.Decimal, parse_int=decimal.Decimal, object_pairs_hook=dict)
    except ValueError:
        return v
    return _jsonb_out(doc)


def _jsonb_out(d: object) -> str:
    if isinstance(d, dict):
        keys = sorted(d, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(f"{_jsonb_out(k)}: {_jsonb_out(d[k])}" for k in keys) + "}"
    if isinstance(d, list):
        return "[" + ", ".join(_jsonb_out(x) for x in d) + "]"
    if isinstance(d, decimal.Decimal):
        t = format(d, "f")
        return "0" if t.lstrip("-").strip("0.") == "" and "." not in t else t
    return json.dumps(d, ensure_ascii=False)


def as_jsonb(o: Outcome) -> Outcome:
    """`o` with every JSON container cell in jsonb's text form (see jsonb_text)."""
    rows = tuple(tuple(jsonb_text(v) for v in r) for r in o.rows)
    return Outcome(o.ok, o.columns, rows, o.rowcount, o.has_rows, o.type_oids)


def peer_runs(rows: Sequence[tuple], cols: Sequence[int]) -> Iterator[tuple[int, int]]:
    """[start, stop) of each run of consecutive rows with equal values in `cols`."""
    i = 0
    while i < len(rows):
        j = i
        key = tuple(rows[i][c] for c in cols)
        while j < len(rows) and tuple(rows[j][c] for c in cols) == key:
            j += 1
        yield i, j
        i = j


def _same_up_to_ties(a: tuple[tuple, ...], b: tuple[tuple, ...], cols: list[int]) -> bool:
    """Same sequence of sort keys, and the same multiset of rows within each run of equal keys."""
    if [tuple(r[i] for i in cols) for r in a] != [tuple(r[i] for i in cols) for r in b]:
        return False
    return all(Counter(a[i:j]) == Counter(b[i:j]) for i, j in peer_runs(a, cols))


# ---------------------------------------------------------------------------------------------
# the verdict


# Names that are also SQL words: a statement containing one does not necessarily use the object.
_SQL_WORDS = frozenset(
    "rows range groups first last value values key name type data text time date timestamp interval "
    "row array json jsonb int integer numeric float real char varchar boolean bool point path bit "
    "order group by all any some in on using as set of to from where select with union except "
    "intersect case when then else end and or not null true false limit offset window over partition "
    "count sum avg min max unbounded preceding following current only lateral".split()
)


def references(sql: str, names: set[str]) -> str | None:
    """A name from `names` that the statement mentions (as a word; SQL words excluded)."""
    if not names:
        return None
    words = set(re.findall(r"[a-z_][a-z0-9_]*", sql.lower()))
    hit = sorted((words & names) - _SQL_WORDS)
    return hit[0] if hit else None


def classify(sql: str, pg: Outcome, mz: Outcome, diverged: set[str] | None = None) -> Verdict:
    """The class of one statement (static n/a must be decided by the caller first)."""
    if not pg.ok and MISSING_SETUP.search(pg.message + " " + sql) and pg.sqlstate[:2] in ("42", "58"):
        return Verdict(Cls.NA, "PostgreSQL lacks setup the corpus does not include")
    if is_internal(mz):
        return Verdict(Cls.INTERNAL, mz.kind or ("XX000" if mz.sqlstate in INTERNAL_STATES else "leak"))
    if pg.ok and mz.ok:
        diff = compare_rows(sql, pg, mz)
        if diff is None:
            return Verdict(Cls.SAME)
        num, box = numeric_columns(pg), container_columns(pg)
        if (num or box) and len(pg.columns) == len(mz.columns) and \
                compare_rows(sql, trimmed(pg, num, box), trimmed(mz, num, box)) is None:
            return Verdict(Cls.DOCUMENTED, "numeric trailing zeros (Materialize trims them)")
        if has_unordered_array_agg(sql) and compare_rows(sql, _elements_sorted(pg), _elements_sorted(mz)) is None:
            return Verdict(Cls.DOCUMENTED, "array_agg without ORDER BY: element order unspecified (Materialize)")
        if len(pg.columns) == len(mz.columns) and compare_rows(sql, as_jsonb(pg), mz) is None:
            return Verdict(Cls.DOCUMENTED, "json is jsonb (Materialize has no text-preserving json type)")
        if NONDETERMINISTIC.search(sql):
            return Verdict(Cls.NA, "nondeterministic or server-specific value", {"diff": diff})
        dep = references(sql, diverged or set())
        if dep:
            return Verdict(Cls.BLOCKED, f"depends on diverged object {dep}", {"diff": diff})
        return Verdict(Cls.DIFFERENT, diff)
    if not pg.ok and not mz.ok and pg.sqlstate[:2] == mz.sqlstate[:2]:
        return Verdict(Cls.SAME)
    # outcomes differ
    if "25P02" in (pg.sqlstate, mz.sqlstate):
        return Verdict(Cls.BLOCKED, "transaction aborted on one side only")
    dep = references(sql, diverged or set())
    if dep:
        return Verdict(Cls.BLOCKED, f"depends on diverged object {dep}")
    if not mz.ok:
        return Verdict(Cls.UNSUPPORTED if mz.sqlstate == "0A000" else Cls.OTHER_ERROR)
    return Verdict(Cls.MZ_OK_PG_ERROR)


_CREATED = re.compile(
    r"^create\s+(?:or\s+replace\s+)?(?:(?:temp|temporary|unlogged|materialized|recursive|default|unique|trusted|"
    r"procedural)\s+)*(?:table|view|index|type|domain|function|procedure|aggregate|sequence|schema|"
    r"trigger|rule|operator(?:\s+class|\s+family)?|cast|collation|statistics)\s+(?:if\s+not\s+exists\s+)?(?:only\s+)?"
    r"((?:\"[^\"]+\"|[\w$]+)(?:\.(?:\"[^\"]+\"|[\w$]+))?)"
)


_INHERITS = re.compile(r"\binherits\s*\(([^()]*)\)|\bpartition\s+of\s+((?:\"[^\"]+\"|[\w$.]+))")


_ROUTINE = re.compile(r"^create\s+(?:or\s+replace\s+)?(?:function|procedure|trigger|rule)\b")
_BODY_WRITES = re.compile(r"\b(?:insert\s+into|update|delete\s+from)\s+(?:only\s+)?((?:\"[^\"]+\"|[\w$.]+))")


def indirectly_written(sql: str) -> set[str]:
    """The tables whose contents an object made outside the comparison may change: the parents
    of a CREATE … INHERITS (p, …) / PARTITION OF p (rows written into the child are read
    through the parent), and the tables the body of a function / procedure / trigger / rule
    writes (calling it writes them on one side only)."""
    n = normalize(sql)
    if not _CREATED.match(n):
        return set()
    out = set()
    for m in _INHERITS.finditer(n):
        names = m.group(1).split(",") if m.group(1) is not None else [m.group(2)]
        out |= {x.strip().split(".")[-1].strip('"') for x in names if x.strip()}
    if _ROUTINE.match(n):
        out |= {m.group(1).split(".")[-1].strip('"') for m in _BODY_WRITES.finditer(n)}
    return out


def created_name(sql: str) -> str | None:
    """The (unqualified, lowercased) name a CREATE statement creates."""
    m = _CREATED.match(normalize(sql))
    if not m or m.group(1) == "on":  # CREATE INDEX ON t (…) has no name
        return None
    return m.group(1).split(".")[-1].strip('"')
