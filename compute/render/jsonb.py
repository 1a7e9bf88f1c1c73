"""jsonb in Spark: Arrow-optimised Python UDFs over canonical jsonb text (sql.jsonb).

Spark's JSON functions do not reproduce Postgres' jsonb (key order, numeric forms,
containment), so the renderer calls these UDFs by name from the SQL text; `register` adds
them to a SparkSession (each session has its own function registry).

Spark evaluates a Python UDF for every row reaching its operator, even inside a CASE branch
the row does not take, so UDFs never raise: those that can fail return `ERR + "[SQLSTATE]
message"` and `checked` turns that into a `raise_error` evaluated only where the value is
used (the branch actually taken).
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sql import jsonb, jsonb_edit
from sql.errors import SqlError

ERR = "\u0001"


def _list(x) -> list | None:
    return None if x is None else list(x)


def _guard(fn: Callable) -> Callable:
    """Errors become ERR-tagged strings (the result must be a string column)."""
    def run(*args):
        try:
            r = fn(*args)
        except SqlError as e:
            return f"{ERR}[{e.sqlstate}] {e.message}"
        return None if r is None else str(r)
    return run


_S, _B = T.StringType(), T.BooleanType()


def _rows(kind: str, j: str | None) -> list[list[str | None]]:
    """The rows of a jsonb table function as [key, value] pairs."""
    try:
        match kind:
            case "elements":
                return [[None, v] for v in jsonb.elements(j)]
            case "elements_text":
                return [[None, jsonb.as_text(v)] for v in jsonb.elements(j)]
            case "each":
                return [[k, v] for k, v in jsonb.each(j)]
            case "each_text":
                return [[k, jsonb.as_text(v)] for k, v in jsonb.each(j)]
            case "keys":
                return [[k, None] for k in jsonb.object_keys(j)]
    except SqlError as e:
        err = f"{ERR}[{e.sqlstate}] {e.message}"
        return [[err, err]]
    raise ValueError(kind)

# name -> (python function, Spark result type)
_UDFS: dict[str, tuple[Callable, T.DataType]] = {
    "mz_jsonb_in": (_guard(jsonb.canonical), _S),
    "mz_jsonb_get_field": (lambda j, k: jsonb.get(j, k), _S),
    "mz_jsonb_get_field_text": (lambda j, k: jsonb.get(j, k, as_text=True), _S),
    "mz_jsonb_get_index": (lambda j, i: None if i is None else jsonb.get(j, int(i)), _S),
    "mz_jsonb_get_index_text": (lambda j, i: None if i is None else jsonb.get(j, int(i), as_text=True), _S),
    "mz_jsonb_get_path": (lambda j, p: jsonb.get_path(j, _list(p)), _S),
    "mz_jsonb_get_path_text": (lambda j, p: jsonb.get_path(j, _list(p), as_text=True), _S),
    "mz_jsonb_contains": (jsonb.contains, _B),
    "mz_jsonb_exists": (jsonb.exists, _B),
    "mz_jsonb_exists_any": (lambda j, ks: jsonb.exists_any(j, _list(ks)), _B),
    "mz_jsonb_exists_all": (lambda j, ks: jsonb.exists_all(j, _list(ks)), _B),
    "mz_jsonb_eq": (jsonb.equal, _B),
    "mz_jsonb_key": (jsonb.equality_key, _S),
    "mz_jsonb_array_length": (_guard(jsonb.array_length), _S),
    "mz_jsonb_numeric": (lambda d: None if d is None else jsonb.number_text(d), _S),
    "mz_jsonb_float": (lambda x: jsonb.from_float(None if x is None else float(x)), _S),
    "mz_jsonb_quote": (jsonb.quote, _S),
    "mz_jsonb_build_object": (_guard(lambda ks, vs: jsonb.build_object(_list(ks), _list(vs))), _S),
    "mz_jsonb_object_agg": (_guard(lambda ks, vs: jsonb.object_agg(_list(ks), _list(vs))), _S),
    "mz_jsonb_rows": (_rows, T.ArrayType(T.ArrayType(_S))),
    "mz_jsonb_concat": (_guard(jsonb_edit.concat), _S),
    "mz_jsonb_delete_key": (_guard(jsonb_edit.delete_key), _S),
    "mz_jsonb_delete_keys": (_guard(lambda j, ks: jsonb_edit.delete_keys(j, _list(ks))), _S),
    "mz_jsonb_delete_index": (_guard(lambda j, i: jsonb_edit.delete_index(j, None if i is None else int(i))), _S),
    "mz_jsonb_delete_path": (_guard(lambda j, p: jsonb_edit.delete_path(j, _list(p))), _S),
    "mz_jsonb_set": (_guard(lambda j, p, v, c=True: jsonb_edit.set_path(j, _list(p), v, c)), _S),
    "mz_jsonb_insert": (_guard(lambda j, p, v, a=False: jsonb_edit.insert(j, _list(p), v, a)), _S),
    "mz_jsonb_strip_nulls": (_guard(jsonb_edit.strip_nulls), _S),
    "mz_jsonb_pretty": (_guard(jsonb_edit.pretty), _S),
    "mz_jsonb_object": (_guard(lambda a: jsonb_edit.object_from_array(_list(a))), _S),
    "mz_jsonb_object_pairs": (_guard(lambda k, v: jsonb_edit.object_from_arrays(_list(k), _list(v))), _S),
}

# HIR functions rendered as a call of the ERR-guarded UDF mz_<name> (arguments in order)
GUARDED = frozenset({"jsonb_concat", "jsonb_delete_key", "jsonb_delete_keys", "jsonb_delete_index",
                     "jsonb_delete_path", "jsonb_set", "jsonb_insert", "jsonb_strip_nulls", "jsonb_pretty",
                     "jsonb_object", "jsonb_object_pairs"})


def register(spark: SparkSession) -> None:
    """Register every jsonb UDF in `spark`'s function registry."""
    for name, (fn, rt) in _UDFS.items():
        spark.udf.register(name, F.udf(fn, rt, useArrow=True))


def checked(call: str, t: str = "STRING") -> str:
    """The value of an ERR-guarded UDF call, failing the query where an error is used."""
    return (f"(CASE WHEN startswith({call}, '{ERR}') THEN CAST(raise_error(substr({call}, 2)) AS {t})"
            f" ELSE CAST({call} AS {t}) END)")
