"""Threshold elision: keeping the rows of positive multiplicity changes nothing when no
row can be negative.

    Threshold(x) = x        when non_negative(x)
"""

from __future__ import annotations

from sql import mir
from sql.transforms.analysis import non_negative
from sql.transforms.visit import map_children


def threshold_elision(r: mir.Mir) -> mir.Mir:
    return _elide(r, {}, {})


def _elide(r: mir.Mir, env: dict[str, bool], memo: dict) -> mir.Mir:
    if isinstance(r, mir.Let):
        value = _elide(r.value, env, memo)
        body = _elide(r.body, {**env, r.id: non_negative(value, env, memo)}, memo)
        return r if value is r.value and body is r.body else mir.Let(r.id, value, body)
    r = map_children(r, lambda c: _elide(c, env, memo))
    if isinstance(r, mir.Threshold) and non_negative(r.input, env, memo):
        return r.input
    return r
