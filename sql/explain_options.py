"""EXPLAIN's `WITH (...)` output modifiers: Materialize's names, and which each output implements."""

from __future__ import annotations

from sql.errors import SYNTAX_ERROR, SqlError, unsupported

# Materialize's EXPLAIN output modifiers (spaces as underscores) -> our option names
_EXPLAIN_OPTION_NAMES = {
    "arity": "arity", "types": "types", "keys": "keys", "redacted": "redacted",
    "join_implementations": "join_impls", "join_impls": "join_impls",
    "node_identifiers": "node_ids", "node_ids": "node_ids", "no_fast_path": "no_fast_path",
    "humanized_expressions": "humanized_exprs", "humanized_exprs": "humanized_exprs",
    "cardinality": "cardinality", "column_names": "column_names", "filter_pushdown": "filter_pushdown",
    "linear_chains": "linear_chains", "no_notices": "no_notices", "non_negative": "non_negative",
    "raw_plans": "raw_plans", "raw_syntax": "raw_syntax", "subtree_size": "subtree_size",
    "timing": "timing", "equivalences": "equivalences", "reoptimize_imported_views": "reoptimize_imported_views",
}
# the modifiers each output implements; any other known one is 0A000 (never silently ignored)
_EXPLAIN_IMPLEMENTED = {
    "mir_text": frozenset({"arity", "types", "keys", "join_impls", "redacted", "humanized_exprs", "no_fast_path",
                           "no_notices", "cardinality"}),
    "lir_text": frozenset({"node_ids", "redacted", "no_fast_path", "no_notices"}),
    "json": frozenset({"no_fast_path", "no_notices"}),
}


def explain_options(raw: str | None, stage: str, fmt: str) -> tuple[str, ...]:
    """The WITH (...) modifiers of an EXPLAIN: unknown ones are a syntax error, known ones this
    output does not implement are 0A000."""
    out: list[str] = []
    for o in (raw or "").split(","):
        if not o.strip():
            continue
        o = "_".join(o.strip().lower().split())
        for suffix in ("_=_true", "=true", "_true"):
            if o.endswith(suffix):
                o = o[: -len(suffix)]
        name = _EXPLAIN_OPTION_NAMES.get(o)
        if name is None:
            raise SqlError(SYNTAX_ERROR, f"unrecognized EXPLAIN option: {o.replace('_', ' ').upper()}")
        output = "json" if fmt == "json" else "lir_text" if stage == "physical" else "mir_text"
        if name not in _EXPLAIN_IMPLEMENTED[output]:
            what = "AS JSON" if fmt == "json" else f"{stage.upper()} PLAN"
            raise unsupported(f"EXPLAIN {what} WITH ({o.replace('_', ' ').upper()})")
        out.append(name)
    return tuple(dict.fromkeys(out))
