"""Binding of operators with a syntax of their own: [NOT] [I]LIKE … ESCAPE, SIMILAR TO, the
POSIX regex match operators, COLLATE and AT TIME ZONE (pure; sql.bind_scalar calls them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql import func_names, regex, timezones
from sql.errors import DATATYPE_MISMATCH, UNDEFINED_FUNCTION, SqlError, unsupported
from sql.func_similar import similar_to_regex
from sql.hir import HirScalar
from sql.scalar import CallBinary, CallUnary, Literal
from sql.scope import Scope
from sql.types import BOOL, TEXT, Interval, SqlType

if TYPE_CHECKING:
    from sql.bind import Binder


def _similar_to(binder: Binder, e: exp.Expression, scope: Scope) -> HirScalar:
    """x SIMILAR TO p [ESCAPE c]: a full match of p's regex (p and c literals)."""
    st, esc_e = (e.this, e.expression) if isinstance(e, exp.Escape) else (e, None)
    x = binder.coerce(binder.scalar(st.this, scope), TEXT)
    pat = binder.coerce(binder.scalar(st.expression, scope), TEXT)
    esc = binder.coerce(binder.scalar(esc_e, scope), TEXT) if esc_e is not None else Literal("\\", TEXT)
    if not (x.typ.is_string and isinstance(pat, Literal) and isinstance(esc, Literal)):
        raise unsupported("SIMILAR TO with a pattern or escape that is not a literal")
    if pat.value is None or (esc_e is not None and esc.value is None):
        return Literal(None, BOOL)
    regex = similar_to_regex(pat.value, esc.value or None)
    return CallBinary("regex_full_match", x, Literal(regex, TEXT), BOOL)


def _like(binder: Binder, e: exp.Expression, scope: Scope) -> HirScalar:
    """x [NOT] [I]LIKE p [ESCAPE c]: a literal pattern is rewritten to the same pattern with
    backslash as its escape (what the renderer's LIKE takes): `c` + any char = that char."""
    like, esc_e = (e.this, e.expression) if isinstance(e, exp.Escape) else (e, None)
    op = "ilike" if isinstance(like, exp.ILike) else "like"
    a, b = binder.scalar(like.this, scope), binder.scalar(like.expression, scope)
    if op == "like" and "bytea" in (a.typ.name, b.typ.name):
        res = _bytea_like(binder, a, b, esc_e, scope)
        return CallUnary("not", res, BOOL) if like.args.get("negate") else res
    esc = binder.coerce(binder.scalar(esc_e, scope), TEXT) if esc_e is not None else Literal("\\", TEXT)
    if not isinstance(esc, Literal):
        raise unsupported("LIKE with an ESCAPE that is not a literal")
    if isinstance(b, Literal) and b.typ.name in ("unknown", "text", "varchar", "bpchar") and b.value is not None \
            and esc.value is not None:
        b = Literal(like_pattern(str(b.value), str(esc.value)), b.typ)
    elif esc.value != "\\":
        if esc.value is None:
            return Literal(None, BOOL)
        if len(str(esc.value)) > 1:
            raise SqlError("22025", "invalid escape string", hint="Escape string must be empty or one character.")
        res = _escaped(binder._binary(op, a, b), str(esc.value))
        return CallUnary("not", res, BOOL) if like.args.get("negate") else res
    res = _pg_escapes(binder._binary(op, a, b))
    if esc.value is None:
        res = Literal(None, BOOL)
    return CallUnary("not", res, BOOL) if like.args.get("negate") else res


def _pg_escapes(res: HirScalar) -> HirScalar:
    """A LIKE whose pattern is computed reads it through like_pattern (the renderer's rewrite
    to the escapes Spark takes, as like_pattern below does for a literal)."""
    if isinstance(res, CallBinary) and not isinstance(res.expr2, Literal):
        return CallBinary(res.func, res.expr1, CallUnary("like_pattern", res.expr2, res.expr2.typ), res.typ)
    return res


def _escaped(res: HirScalar, escape: str) -> HirScalar:
    """A LIKE whose computed pattern has escape character `escape` ('' = none) reads it
    through like_pattern_escape: the same pattern with the escapes Spark takes."""
    assert isinstance(res, CallBinary)
    p = res.expr2
    return CallBinary(res.func, res.expr1, CallBinary("like_pattern_escape", p, Literal(escape, TEXT), p.typ), res.typ)


def _bytea_like(binder: Binder, a: HirScalar, b: HirScalar, esc_e: exp.Expression | None, scope: Scope) -> HirScalar:
    """bytea LIKE bytea [ESCAPE e] (bytealike, like_escape(bytea, bytea)): the LIKE of their
    ISO-8859-1 texts (one character per byte); a literal pattern is rewritten as a text one
    is (escape: the byte `\\` unless e is given)."""
    if esc_e is not None:
        if b.typ.name != "bytea":  # like_escape(text, text): bytea ~~ text
            raise SqlError(UNDEFINED_FUNCTION, f"operator does not exist: {a.typ.pg_format()} ~~ text",
                           hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
    escape = "\\"
    if esc_e is not None:  # like_escape(bytea, bytea): the escape is a bytea too
        esc = binder.coerce(binder.scalar(esc_e, scope), b.typ)
        if not isinstance(esc, Literal):
            raise unsupported("LIKE with an ESCAPE that is not a literal")
        if esc.value is None:
            return Literal(None, BOOL)
        escape = bytes(esc.value).decode("latin-1")
    res = binder._binary("like", a, b)
    assert isinstance(res, CallBinary)
    pat = res.expr2
    if escape != "\\" and not (isinstance(pat, Literal) and pat.value is not None):
        if isinstance(pat, Literal):
            return Literal(None, BOOL)
        raise unsupported("LIKE … ESCAPE with a pattern that is not a literal")
    if isinstance(pat, Literal) and pat.value is not None:
        text = like_pattern(bytes(pat.value).decode("latin-1"), escape)
        res = CallBinary("like", res.expr1, Literal(text.encode("latin-1"), pat.typ), BOOL)
    return _pg_escapes(res)


def like_pattern(pattern: str, escape: str) -> str:
    """The LIKE pattern with escape `\\` that means what `pattern` with `escape` means ('' = no
    escape): escape + c is a literal c; a backslash that is not the escape is a literal one."""
    if len(escape) > 1:
        raise SqlError("22025", "invalid escape string", hint="Escape string must be empty or one character.")
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape:
            if i + 1 == len(pattern):
                raise SqlError("22025", "LIKE pattern must not end with escape character")
            nxt = pattern[i + 1]
            out.append("\\" + nxt if nxt in "%_\\" else nxt)
            i += 2
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


# collations that order text by its bytes, as mzspark always does
_BYTE_ORDER_COLLATIONS = frozenset({"c", "posix", "default", "ucs_basic"})


def _collate(binder: Binder, e: exp.Collate, scope: Scope) -> HirScalar:
    """x COLLATE "C" = x: text compares and sorts by its bytes here, which is what the C,
    POSIX, ucs_basic and (in mzspark) default collations mean; other collations are 0A000."""
    x = binder.scalar(e.this, scope)
    coll = e.expression
    name = coll.name if isinstance(coll, (exp.Identifier, exp.Column, exp.Literal)) else coll.sql()
    if x.typ.name == "unknown":
        x = binder.coerce(x, TEXT)
    if not x.typ.is_string:
        raise SqlError(DATATYPE_MISMATCH, f"collations are not supported by type {x.typ.pg_format()}")
    if name.lower() not in _BYTE_ORDER_COLLATIONS:
        raise unsupported(f'collation "{name}"')
    return x


def _at_time_zone(binder: Binder, x_e: exp.Expression, zone_e: exp.Expression, scope: Scope) -> HirScalar:
    """x AT TIME ZONE z = timezone(z, x): a timestamptz becomes the wall-clock timestamp in z,
    a timestamp the instant that is that wall clock in z (unknown and date inputs are
    timestamptz, Postgres' preferred type); z a literal zone name or interval."""
    x = binder.scalar(x_e, scope)
    z = binder.scalar(zone_e, scope)
    if x.typ.name in ("unknown", "date"):
        x = binder.coerce(x, SqlType("timestamptz"))
    if x.typ.name not in ("timestamp", "timestamptz"):
        raise func_names.no_function("timezone", [z.typ, x.typ])
    out = SqlType("timestamp" if x.typ.name == "timestamptz" else "timestamptz")
    if not isinstance(z, Literal):
        raise unsupported("AT TIME ZONE with a time zone that is not a literal")
    if z.value is None:
        return Literal(None, out)
    if z.typ.name == "interval" and isinstance(z.value, Interval):
        zid = timezones.interval_zone_id(z.value)
    elif z.typ.is_string or z.typ.name == "unknown":
        zid = timezones.zone_id(str(z.value))
    else:
        raise func_names.no_function("timezone", [z.typ, x.typ])
    return CallBinary("timezone", Literal(zid, TEXT), x, out)


def _regex_match(binder: Binder, e: exp.RegexpLike | exp.RegexpILike, scope: Scope) -> HirScalar:
    """x ~ p (x ~* p: case-insensitively): does p's regex match somewhere in x (text operands;
    p a literal, translated to Java's regex dialect like regexp_match's)."""
    x0, p0 = binder.scalar(e.this, scope), binder.scalar(e.expression, scope)
    op = "~*" if isinstance(e, exp.RegexpILike) else "~"
    if not all(t.is_string or t.name == "unknown" for t in (x0.typ, p0.typ)):
        raise SqlError(UNDEFINED_FUNCTION, f"operator does not exist: {x0.typ.pg_format()} {op} {p0.typ.pg_format()}",
                       hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
    x, pat = binder.coerce(x0, TEXT), binder.coerce(p0, TEXT)
    if not isinstance(pat, Literal):
        raise unsupported(f"{op} with a pattern that is not a literal")
    if pat.value is None:
        return Literal(None, BOOL)
    jp = regex.java_regex(pat.value)
    return CallBinary("regex_full_match", x, Literal(("(?i)" if op == "~*" else "") + jp, TEXT), BOOL)
