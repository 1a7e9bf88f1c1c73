"""Float statistics as PostgreSQL computes them (float.c): a fold of the group's values into
the Youngs-Cramer state, then the aggregate's final function.

One input (var_pop / var_samp / stddev_pop / stddev_samp over float4 / float8,
float8_accum), state (N, Sx, Sxx), for each value X:
    N' = N + 1, Sx' = Sx + X, Sxx' = Sxx + (X N' - Sx')^2 / (N' N)         (N > 0)
    Sxx' = NaN when X is infinite or NaN                                     (first value)
Two inputs (regr_*, covar_*, corr of (Y, X), float8_regr_accum), state (N, Sx, Sxx, Sy,
Syy, Sxy), with tX = X N' - Sx', tY = Y N' - Sy', scale = 1 / (N' N):
    Sxx' = Sxx + tX tX scale, Syy' = Syy + tY tY scale, Sxy' = Sxy + tX tY scale
An infinite Sxx' / Syy' / Sxy' becomes NaN; when finite inputs made a sum infinite the
query fails with 22003 (value out of range: overflow). The values fold in the group's
collected order (Postgres: its scan order); the algorithm is stable under reordering up to
the last bits.
"""

from __future__ import annotations

_NAN = "CAST('NaN' AS DOUBLE)"
_NULL = "CAST(NULL AS DOUBLE)"
_OVERFLOW = "raise_error('[22003] value out of range: overflow')"


def _inf(v: str) -> str:
    return f"(abs({v}) = CAST('Infinity' AS DOUBLE))"


def _bad(v: str) -> str:
    return f"(isnan({v}) OR {_inf(v)})"


def _single_step() -> str:
    n, sx = "(s.n + 1D)", "(s.sx + v)"
    raw = f"(s.sxx + (v * {n} - {sx}) * (v * {n} - {sx}) / ({n} * s.n))"
    later = (f"CASE WHEN {_inf(sx)} OR {_inf(raw)} THEN (CASE WHEN NOT {_inf('s.sx')} AND NOT {_inf('v')}"
             f" THEN CAST({_OVERFLOW} AS DOUBLE) ELSE {_NAN} END) ELSE {raw} END")
    sxx = f"(CASE WHEN s.n > 0 THEN {later} WHEN {_bad('v')} THEN {_NAN} ELSE s.sxx END)"
    return f"(s, v) -> named_struct('n', {n}, 'sx', {sx}, 'sxx', {sxx})"


def _regr_step() -> str:
    n, sx, sy = "(s.n + 1D)", "(s.sx + r.f1)", "(s.sy + r.f0)"
    tx, ty, scale = f"(r.f1 * {n} - {sx})", f"(r.f0 * {n} - {sy})", f"(1D / ({n} * s.n))"
    sxx, syy, sxy = f"(s.sxx + {tx} * {tx} * {scale})", f"(s.syy + {ty} * {ty} * {scale})", f"(s.sxy + {tx} * {ty} * {scale})"
    fin_x, fin_y = f"NOT {_inf('s.sx')} AND NOT {_inf('r.f1')}", f"NOT {_inf('s.sy')} AND NOT {_inf('r.f0')}"
    overflow = (f"(s.n > 0 AND ((({_inf(sx)} OR {_inf(sxx)}) AND {fin_x}) OR (({_inf(sy)} OR {_inf(syy)}) AND {fin_y})"
                f" OR ({_inf(sxy)} AND {fin_x} AND {fin_y})))")

    def later(raw: str) -> str:
        return f"IF({_inf(raw)}, {_NAN}, {raw})"

    bx, by = _bad("r.f1"), _bad("r.f0")
    return ("(s, r) -> named_struct("
            f"'n', IF({overflow}, CAST({_OVERFLOW} AS DOUBLE), {n}), 'sx', {sx}, 'sy', {sy},"
            f" 'sxx', IF(s.n > 0, {later(sxx)}, IF({bx}, {_NAN}, s.sxx)),"
            f" 'syy', IF(s.n > 0, {later(syy)}, IF({by}, {_NAN}, s.syy)),"
            f" 'sxy', IF(s.n > 0, {later(sxy)}, IF({bx} OR {by}, {_NAN}, s.sxy)))")


_FINALS = {
    "var_pop": "IF(s.n = 0, {null}, s.sxx / s.n)",
    "var_samp": "IF(s.n <= 1, {null}, s.sxx / (s.n - 1D))",
    "stddev_pop": "IF(s.n = 0, {null}, sqrt(s.sxx / s.n))",
    "stddev_samp": "IF(s.n <= 1, {null}, sqrt(s.sxx / (s.n - 1D)))",
    "regr_sxx": "IF(s.n < 1, {null}, s.sxx)",
    "regr_syy": "IF(s.n < 1, {null}, s.syy)",
    "regr_sxy": "IF(s.n < 1, {null}, s.sxy)",
    "regr_avgx": "IF(s.n < 1, {null}, s.sx / s.n)",
    "regr_avgy": "IF(s.n < 1, {null}, s.sy / s.n)",
    "covar_pop": "IF(s.n < 1, {null}, s.sxy / s.n)",
    "covar_samp": "IF(s.n < 2, {null}, s.sxy / (s.n - 1D))",
    "corr": "IF(s.n < 1 OR s.sxx = 0 OR s.syy = 0, {null}, s.sxy / sqrt(s.sxx * s.syy))",
    "regr_r2": "IF(s.n < 1 OR s.sxx = 0, {null}, IF(s.syy = 0, 1D, (s.sxy * s.sxy) / (s.sxx * s.syy)))",
    "regr_slope": "IF(s.n < 1 OR s.sxx = 0, {null}, s.sxy / s.sxx)",
    "regr_intercept": "IF(s.n < 1 OR s.sxx = 0, {null}, (s.sy - s.sx * s.sxy / s.sxx) / s.n)",
}

FOLDED = frozenset(_FINALS)
SINGLE = frozenset({"var_pop", "var_samp", "stddev_pop", "stddev_samp"})


def fold(func: str, values: str) -> str:
    """The aggregate `func` of the collected values (doubles, or records (y, x) for the
    two-input aggregates); NULL (var_samp etc.) or the final function's value."""
    final = "s -> " + _FINALS[func].format(null=_NULL)
    if func in SINGLE:
        return f"aggregate({values}, named_struct('n', 0D, 'sx', 0D, 'sxx', 0D), {_single_step()}, {final})"
    start = "named_struct('n', 0D, 'sx', 0D, 'sy', 0D, 'sxx', 0D, 'syy', 0D, 'sxy', 0D)"
    return f"aggregate({values}, {start}, {_regr_step()}, {final})"
