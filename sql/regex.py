"""PostgreSQL 15's regexp_count / regexp_instr / regexp_substr / regexp_like, regexp_replace
with start and N, and regexp_split_to_array: typing, argument checks (Postgres' errors), and
the Java regexes the renderer runs them with.

Pure: the pattern, flags and integer arguments are literals (0A000 otherwise). The N-th match
from `start` is found by one anchored Java regex,
    ^( .{start-1} (?>.*?(?>B)){N-1} .*? ) (B)
whose atomic groups commit each earlier match to the leftmost one (Postgres' and Java's
find loop), so group 1 is the text before the N-th match and the last group is the match.
After an empty match the find loop steps one character on, which the atomic copies cannot
express: N > 1 with a pattern that can match the empty string is 0A000."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sql.errors import SqlError, unsupported
from sql.types import BOOL, INT4, TEXT, SqlType

REGEX_FUNCTIONS = frozenset({"regexp_count", "regexp_instr", "regexp_substr", "regexp_like", "regexp_split_to_array"})

# Postgres' argument lists after the source and pattern ("i" = integer, "t" = text)
_SIGNATURES = {"regexp_count": "it", "regexp_instr": "iiiti", "regexp_substr": "iiti", "regexp_like": "t",
               "regexp_split_to_array": "t"}
_RESULTS = {"regexp_count": INT4, "regexp_instr": INT4, "regexp_substr": TEXT, "regexp_like": BOOL,
            "regexp_split_to_array": SqlType("_text")}
_PG_FLAGS = set("bceginmpqstwx")
INVALID_PARAMETER_VALUE = "22023"
INVALID_REGULAR_EXPRESSION = "2201B"


_POSIX_CLASSES = {"alpha": r"\p{Alpha}", "digit": r"\d", "alnum": r"\p{Alnum}", "upper": r"\p{Upper}",
                  "lower": r"\p{Lower}", "space": r"\s", "punct": r"\p{Punct}", "xdigit": r"\p{XDigit}"}


def java_regex(pattern: str) -> str:
    """A Java regex matching what the Postgres (ARE) regex `pattern` matches, for the common
    subset; 0A000 for constructs whose meaning differs (word boundaries, back references)."""
    if re.search(r"\\[mMyYZA1-9]", pattern) or "(?" in pattern or pattern.startswith("***"):
        raise unsupported(f"regular expression {pattern!r} (Postgres-only constructs)")

    def cls(m: re.Match) -> str:
        c = _POSIX_CLASSES.get(m.group(1))
        if c is None:
            raise unsupported(f"character class [:{m.group(1)}:]")
        return c

    return re.sub(r"\[:(\w+):\]", cls, pattern)


def leftmost_first_is_longest(pattern: str) -> None:
    """0A000 for a pattern whose match Java could choose otherwise than Postgres. Java takes
    the first match its backtracking finds; Postgres' ARE the longest (or, led by a non-greedy
    quantifier, shortest) match at the leftmost position, its groups by their own greediness.
    They differ with alternation (`a|ab` on 'ab': Java 'a', Postgres 'ab'; allowed: distinct
    literal strings none a prefix of another, which match at most one at a position), a quantified group
    (`(ab)?(abcd)?` on 'abcd') and non-greedy quantifiers (`(a+?)(b*)` on 'ab'); a pattern of
    plain groups and greedily quantified single atoms matched alike in 5,000 random cases
    (and 3,000 without groups), where those three differed in 1-5 %. Only where the match's
    extent matters: `~` and regexp_like ask whether there is a match at all."""
    jp = java_regex(pattern)
    i, n = 0, len(jp)
    prev = ""  # the previous token's kind: "atom", "group" (a closing paren), "quant"
    while i < n:
        c = jp[i]
        if c == "\\":
            i, prev = i + 2, "atom"
            continue
        if c == "[":
            j = i + 1
            j += jp[j:j + 1] == "^"
            j += jp[j:j + 1] == "]"
            while j < n and jp[j] != "]":
                j += 2 if jp[j] == "\\" else 1
            i, prev = j + 1, "atom"
            continue
        if c in "?*+{":
            if prev == "group":
                raise unsupported(f"regular expression {pattern!r} (a quantified group: Java may match otherwise)")
            if prev == "quant" and c == "?":
                raise unsupported(f"regular expression {pattern!r} (a non-greedy quantifier: Java may match otherwise)")
            if c == "{":
                i = jp.find("}", i) + 1 or n
            else:
                i += 1
            prev = "quant"
            continue
        prev = "group" if c == ")" else "open" if c == "(" else "atom"
        i += 1
    _literal_alternation(pattern, jp)


_ANCHOR = "\0"  # an alternative's ^ or $ (zero-width), in _literal_alternation


def _literal_alternation(pattern: str, jp: str) -> None:
    """Alternation only of literal strings none of which is a prefix of another (case-folded):
    then at most one alternative matches at a position, as a literal would (`a|e|i`, `(v|ph)`);
    or of anchors only (`^|$`: all match the empty string)."""
    stack: list[list[str | None]] = [[""]]  # per open group: its alternatives (None: not literal)
    i, n = 0, len(jp)

    def close(alts: list[str | None]) -> None:
        if len(alts) > 1 and all(a and set(a) == {_ANCHOR} for a in alts):
            return  # anchors only (`^|$`): every alternative matches the empty string
        if len(alts) > 1:
            texts = [a.lower() for a in alts if a and _ANCHOR not in a]
            if len(texts) < len(alts) or any(x != y and y.startswith(x) for x in texts for y in texts) \
                    or len(set(texts)) < len(texts):
                raise unsupported(f"regular expression {pattern!r} (alternation of other than distinct literal"
                                  " strings: Java may match otherwise)")

    def taint() -> None:
        stack[-1][-1] = None

    while i < n:
        c = jp[i]
        if c == "(":
            taint()
            stack.append([""])
        elif c == ")" and len(stack) > 1:
            close(stack.pop())
        elif c == "|":
            stack[-1].append("")
        elif c in "^$" and stack[-1][-1] is not None and set(stack[-1][-1]) <= {_ANCHOR}:
            stack[-1][-1] += _ANCHOR  # type: ignore[operator]
        elif c in "\\[.^$?*+{":
            taint()
            if c == "\\":
                i += 1
            elif c == "[":
                j = i + 1
                j += jp[j:j + 1] == "^"
                j += jp[j:j + 1] == "]"
                while j < n and jp[j] != "]":
                    j += 2 if jp[j] == "\\" else 1
                i = j
        elif stack[-1][-1] is not None:
            stack[-1][-1] += c  # type: ignore[operator]
        i += 1
    close(stack[0])


def function_type(name: str, args: list[SqlType]) -> tuple[list[SqlType], SqlType] | None:
    """(argument types, result type) of a regex function call, None when no signature fits;
    regexp_replace here only in its start form (a 4th argument of integer type)."""
    def ok(t: SqlType, kind: str) -> bool:
        return t.name == "unknown" or (t.is_string if kind == "t" else t.name in ("int2", "int4"))

    if name == "regexp_replace":
        sig, rtype = "tiit", TEXT
        if len(args) < 4 or args[3].name == "unknown" or not 4 <= len(args) <= 6:
            return None
        rest = args[2:]
    elif name in _SIGNATURES:
        sig, rtype, rest = _SIGNATURES[name], _RESULTS[name], args[2:]
        if len(rest) > len(sig):
            return None
    else:
        return None
    if len(args) < 2 or not all(ok(t, "t") for t in args[:2]) or not all(ok(t, k) for t, k in zip(rest, sig, strict=False)):
        return None
    return [TEXT, TEXT] + [TEXT if k == "t" else INT4 for k in sig[:len(rest)]], rtype


@dataclass(frozen=True)
class RegexArgs:
    """A call's literal arguments with Postgres' defaults filled in."""
    pattern: str
    start: int = 1
    n: int = 1
    endoption: int = 0
    flags: str = ""
    subexpr: int = 0
    replacement: str | None = None


def parse_args(name: str, values: list) -> RegexArgs:
    """The literal arguments after the source, checked as Postgres checks them (22023)."""
    pat, rest = values[0], values[1:]

    def at(i: int, default: object) -> object:
        return rest[i] if i < len(rest) else default

    match name:
        case "regexp_count":
            fields = {"start": at(0, 1), "flags": at(1, "")}
        case "regexp_instr":
            fields = {"start": at(0, 1), "n": at(1, 1), "endoption": at(2, 0), "flags": at(3, ""), "subexpr": at(4, 0)}
        case "regexp_substr":
            fields = {"start": at(0, 1), "n": at(1, 1), "flags": at(2, ""), "subexpr": at(3, 0)}
        case "regexp_replace":
            # regexp_replace(source, pattern, replacement, start [, N [, flags]]): N = 0 replaces all
            fields = {"replacement": at(0, ""), "start": at(1, 1), "n": at(2, 1), "flags": at(3, "")}
        case _:  # regexp_like, regexp_split_to_array, regexp_matches
            fields = {"flags": at(0, "")}
    a = RegexArgs(pat, **fields)  # type: ignore[arg-type]
    check_flags(a.flags)
    for param, v, least in (("start", a.start, 1), ("n", a.n, 0 if name == "regexp_replace" else 1),
                            ("endoption", a.endoption, 0), ("subexpr", a.subexpr, 0)):
        if v < least or (param == "endoption" and v > 1):
            raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "{param}": {v}')
    if "g" in a.flags and name not in ("regexp_replace", "regexp_matches"):
        # regexp_replace(..., start, N, 'g'): N > 0 wins, N = 0 replaces all anyway
        raise SqlError(INVALID_PARAMETER_VALUE, f'{name}() does not support the "global" option')
    if set(a.flags) - set("gics"):
        raise unsupported(f"regular expression flags {a.flags!r}")
    return a


def check_flags(flags: str) -> None:
    """Postgres' 22023 for a character that is no regular expression option."""
    for c in flags:
        if c not in _PG_FLAGS:
            raise SqlError(INVALID_PARAMETER_VALUE, f'invalid regular expression option: "{c}"')


@dataclass(frozen=True)
class Body:
    """A Postgres pattern as Java regex text B (without flags) and its capture groups."""
    text: str
    groups: tuple[tuple[int, int], ...]  # (start, end) of each group's content in text
    caret: bool  # a ^ outside brackets: means string start, so no substring tricks


def body(pattern: str) -> Body:
    """B: java_regex's translation with `$` as `\\z` (Postgres' $ is the string end only; Java's
    also matches before a final newline); \\b and \\B (backspace / other in Postgres, word
    boundaries in Java) are 0A000."""
    jp = java_regex(pattern)
    out: list[str] = []
    opens: list[int] = []
    spans: dict[int, tuple[int, int]] = {}
    order: list[int] = []
    caret, i, n = False, 0, len(jp)
    while i < n:
        c = jp[i]
        if c == "\\" and i + 1 < n:
            if jp[i + 1] in "bB":
                raise unsupported(f"regular expression escape \\{jp[i + 1]}")
            out.append(jp[i:i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            j += jp[j:j + 1] == "^"
            j += jp[j:j + 1] == "]"
            while j < n and jp[j] != "]":
                if jp[j] == "[":
                    raise unsupported("regular expression with [ inside a bracket expression")
                j += 2 if jp[j] == "\\" else 1
            out.append(jp[i:j + 1])
            i = j + 1
            continue
        if c == "(":
            opens.append(len("".join(out)) + 1)
            order.append(opens[-1])
        elif c == ")" and opens:
            s = opens.pop()
            spans[s] = (s, len("".join(out)))
        elif c == "^":
            caret = True
        out.append("\\z" if c == "$" else c)
        i += 1
    text = "".join(out)
    try:  # Python's re reads this subset as Java does: its syntax errors are Java's
        re.compile(re.sub(r"\\p\{\w+\}", "a", text).replace("\\z", "\\Z"))
    except re.error as err:
        raise SqlError(INVALID_REGULAR_EXPRESSION, f"invalid regular expression: {err.msg}") from None
    return Body(text, tuple(spans[s] for s in order if s in spans), caret)


def nullable(text: str) -> bool:
    """Can Java regex `text` match the empty string? (conservative: True when unsure)"""
    py = re.sub(r"\\p\{\w+\}", "a", text).replace("\\z", "\\Z")
    try:
        return re.fullmatch(py, "") is not None
    except re.error:
        return True


def mandatory(b: Body, k: int) -> bool:
    """Does group k (1-based) take part in every match of B? (conservative: B has no
    alternation, and neither the group nor one around it is quantified)."""
    if "|" in b.text:
        return False
    s, e = b.groups[k - 1]
    return not any(gs <= s and e <= ge and b.text[ge + 1:ge + 2] in ("?", "*", "+", "{") for gs, ge in b.groups)


def mode(flags: str) -> str:
    """Java inline flags: Postgres' default `.` matches newlines (DOTALL); i / c: the last wins."""
    return "(?siu)" if flags.rfind("i") > flags.rfind("c") else "(?s)"


def nth_match(b: Body, a: RegexArgs) -> tuple[str, int]:
    """(Java regex, index of the group holding the match): group 1 is the text before the N-th
    match at or after `start` (see the module docstring)."""
    if a.n > 1 and nullable(b.text):
        raise unsupported("the N-th match of a regular expression that can match the empty string")
    skip = f".{{{a.start - 1}}}" if a.start > 1 else ""
    copies = f"(?>.*?(?>{b.text}))" * (a.n - 1)
    return f"{mode(a.flags)}^({skip}{copies}.*?)({b.text})", 2 + (a.n - 1) * len(b.groups)


def from_start(b: Body, a: RegexArgs) -> None:
    """Searching substr(x, start) is searching x from start only without ^ (string start)."""
    if a.start > 1 and b.caret:
        raise unsupported("a regular expression with ^ searched from a start position")


def java_replacement(repl: str, whole: int, groups: int, total: int) -> str:
    """Postgres' replacement as Java's: \\& is group `whole` (B's match), \\k group whole + k
    (empty when B has no group k, as in Postgres); 0A000 where Java would read a following
    literal digit into the group number."""
    out, i = [], 0
    while i < len(repl):
        c = repl[i]
        if c == "\\" and i + 1 < len(repl):
            nxt = repl[i + 1]
            if nxt.isdigit() or nxt == "&":
                k = 0 if nxt == "&" else int(nxt)
                if k <= groups:
                    g = whole + k
                    if i + 2 < len(repl) and repl[i + 2].isdigit() and g * 10 + int(repl[i + 2]) <= total:
                        raise unsupported("a regexp_replace replacement with a digit after a group reference")
                    out.append(f"${g}")
            else:
                out.append("\\" + nxt if nxt in "\\$" else nxt)
            i += 2
            continue
        out.append("\\$" if c == "$" else c)
        i += 1
    return "".join(out)


def check(name: str, a: RegexArgs) -> Body:
    """Every 0A000 the renderer would meet, raised at bind time; B of the pattern."""
    b = body(a.pattern)
    if name != "regexp_like":
        leftmost_first_is_longest(a.pattern)
    match name:
        case "regexp_count":
            from_start(b, a)
        case "regexp_instr" | "regexp_substr":
            nth_match(b, a)
            if a.subexpr and name == "regexp_instr" and a.subexpr <= len(b.groups):
                raise unsupported("regexp_instr of a parenthesized subexpression")
            if a.subexpr and a.subexpr <= len(b.groups):
                s, e = b.groups[a.subexpr - 1]
                if nullable(b.text[s:e]) and not mandatory(b, a.subexpr):
                    raise unsupported("regexp_substr of a subexpression that can match the empty string")
        case "regexp_replace_from":
            if a.n == 0:
                from_start(b, a)
            else:
                _, whole = nth_match(b, a)
                java_replacement(a.replacement or "", whole, len(b.groups), whole + len(b.groups))
        case "regexp_split_to_array":
            if nullable(b.text):
                raise unsupported("regexp_split_to_array with a pattern that can match the empty string")
    return b


def bind_call(name: str, args: tuple) -> object:
    """The call with its literal arguments checked and normalized to
    name(x, pattern, start, N, endoption, flags, subexpr[, replacement])."""
    from sql.scalar import CallVariadic, Literal

    if not all(isinstance(x, Literal) and x.value is not None for x in args[1:]):
        raise unsupported(f"{name} with a pattern, flags or position that is not a literal")
    values = [x.value for x in args[1:]]
    a = parse_args(name, values)
    if name == "regexp_replace":
        name = "regexp_replace_from"
    check(name, a)
    lits: tuple[Literal, ...] = (Literal(a.pattern, TEXT), Literal(a.start, INT4), Literal(a.n, INT4), Literal(a.endoption, INT4),
            Literal(a.flags, TEXT), Literal(a.subexpr, INT4))
    if a.replacement is not None:
        lits += (Literal(a.replacement, TEXT),)
    return CallVariadic(name, (args[0], *lits), _RESULTS.get(name, TEXT))


def args_of(lits: tuple) -> RegexArgs:
    """The RegexArgs of a normalized call's literal arguments (after the source)."""
    vals = [x.value for x in lits]
    return RegexArgs(vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6] if len(vals) > 6 else None)


def bind_matches(args: list) -> tuple:
    """regexp_matches(s, pattern [, flags]) as (s, pattern, flags): the pattern and flags
    literals (0A000 otherwise), checked as Postgres checks them; a NULL pattern or flags makes
    no rows, as a NULL source does (the function is strict)."""
    from sql.scalar import Literal

    if not all(isinstance(x, Literal) for x in args[1:]):
        raise unsupported("regexp_matches with a pattern or flags that is not a literal")
    if any(x.value is None for x in args[1:]):
        return (Literal(None, TEXT), Literal("", TEXT), Literal("", TEXT))
    a = parse_args("regexp_matches", [x.value for x in args[1:]])
    matches_body(a.pattern)
    return (args[0], Literal(a.pattern, TEXT), Literal(a.flags, TEXT))


def matches_body(pattern: str) -> Body:
    """B of a regexp_matches pattern: each group's text is read from Java's match, where a
    group that took no part is '' (Spark's regexp_extract_all), so a group that may take no
    part must not match '' (its '' then is Postgres' NULL), else 0A000."""
    b = body(pattern)
    leftmost_first_is_longest(pattern)
    for k, (s, e) in enumerate(b.groups, 1):
        if not mandatory(b, k) and nullable(b.text[s:e]):
            raise unsupported("regexp_matches with an optional group that can match the empty string")
    return b


def regex_call(name: str, pattern: str, *rest: str) -> tuple[str, str | None, bool]:
    """(Java pattern, Java replacement or None, global) of regexp_replace / regexp_match with
    literal pattern, [replacement,] [flags]."""
    import re

    repl = rest[0] if name == "regexp_replace" else None
    flags = rest[1] if name == "regexp_replace" and len(rest) > 1 else (rest[0] if name == "regexp_match" and rest else "")
    check_flags(flags)
    if set(flags) - set("gic"):
        raise unsupported(f"regular expression flags {flags!r}")
    if name == "regexp_match" and "g" in flags:
        raise SqlError("22023", "regexp_match() does not support the \"global\" option",
                       hint="Use the regexp_matches function instead.")
    jp = java_regex(pattern)
    leftmost_first_is_longest(pattern)
    if "i" in flags.replace("c", "") and flags.rfind("i") > flags.rfind("c"):
        jp = "(?i)" + jp
    jr = None
    if repl is not None:
        out, i = [], 0
        while i < len(repl):
            c = repl[i]
            if c == "\\" and i + 1 < len(repl):
                nxt = repl[i + 1]
                if nxt.isdigit():
                    out.append("$" + nxt)
                elif nxt == "&":
                    out.append("$0")
                else:
                    out.append(re.escape(nxt) if nxt in "\\$" else nxt)
                i += 2
                continue
            out.append("\\$" if c == "$" else c)
            i += 1
        jr = "".join(out)
    return jp, jr, "g" in flags
