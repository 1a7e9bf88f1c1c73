"""The coordinator: sequences statements of all sessions against the catalog, the
timestamp oracle, and the compute layer (DESIGN §2)."""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog, Column, Item
from catalog.oracle import TimestampOracle
from catalog.storage.arrow_types import (
    arrow_to_rows,
    arrow_type,
    batch_schema,
    column_name,
    rows_to_arrow,
)
from compute.plan import lir, pipeline
from compute.plan.non_negative import non_negative
from compute.plan.pipeline import PlanFlags
from server.api import (
    ColumnDesc,
    CommandResult,
    CopyInResult,
    CopyOutResult,
    Prepared,
    Result,
    RowsResult,
)
from server.compute import Compute
from server.session import SESSION_VARS, Session, Transaction
from sql import statements as st
from sql.bind import Binder, BoundQuery, ItemRef, Scope, ScopeColumn, sql_type_of
from sql.errors import (
    ACTIVE_SQL_TRANSACTION,
    DUPLICATE_COLUMN,
    FEATURE_NOT_SUPPORTED,
    IN_FAILED_SQL_TRANSACTION,
    INTERNAL_ERROR,
    INVALID_TRANSACTION_STATE,
    NOT_NULL_VIOLATION,
    OUT_OF_MEMORY,
    QUERY_CANCELED,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_SCHEMA,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
    unsupported,
)
from sql.hir import HConstant, HirRel, HMap, HProject
from sql.lex import split_statements
from sql.lowering import lower as lower_to_mir
from sql.mir import Constant, Mir
from sql.optimize import optimize
from sql.scalar import Column as ColRef
from sql.scalar import Literal
from sql.types import TEXT, SqlType

log = logging.getLogger("mzspark.coordinator")
BATCH_ROWS = 4096
COMPACT_AFTER_BATCHES = 32


@dataclass
class _Planned:
    """What Parse produced: the classified statement plus, for queries, the bound HIR."""

    stmt: st.Statement
    bound: BoundQuery | None = None
    param_types: tuple[SqlType, ...] = ()
    extra: Any = None
    catalog_version: int = -1  # plans bound against another catalog version are re-planned


_COMPUTE_TYPES = frozenset({
    "bool", "int2", "int4", "int8", "oid", "uint8", "mz_timestamp", "float4", "float8", "numeric", "text", "varchar",
    "bpchar", "name", "jsonb", "uuid", "date", "timestamp", "timestamptz", "time", "interval", "bytea",
})


def _as_text(v: Any, t: SqlType) -> str:
    from sql.literal import to_text

    if isinstance(v, (list, tuple)):
        return "{" + ",".join("NULL" if x is None else to_text(x, t) for x in v) + "}"
    return v if isinstance(v, str) else to_text(v, t)


class _Resolver:
    """CatalogReader over the durable catalog with the session's search path."""

    def __init__(self, catalog: Catalog, session: Session, system: Any = None) -> None:
        self.catalog = catalog
        self.session = session
        self.system = system  # SystemHandler: system relations read as constant inputs

    def item(self, parts: tuple[str, ...] | list[str]) -> Item | None:
        parts = list(parts)
        if len(parts) == 3:
            if parts[0] != "materialize":
                raise SqlError(UNDEFINED_TABLE, f'database "{parts[0]}" does not exist')
            parts = parts[1:]
        if len(parts) == 2:
            return self.catalog.get_item(parts[0], parts[1])
        for schema in self.session.search_path():
            it = self.catalog.get_item(schema, parts[0])
            if it is not None:
                return it
        return None

    def resolve(self, parts: list[str]) -> ItemRef | None:
        it = self.item(parts)
        if it is None:
            return self._system_relation(parts)
        if it.kind not in ("table", "view", "materialized-view"):
            raise SqlError(WRONG_OBJECT_TYPE, f"{it.qualified_name} is a {it.kind_word}; it cannot be read")
        hir = self.view_hir(it) if it.kind == "view" else None
        return ItemRef(it.id, it.schema, it.name, it.kind, tuple(c.name for c in it.columns), tuple(c.type for c in it.columns),
                       it.oid, tuple(c.nullable for c in it.columns), hir)

    def _system_relation(self, parts: list[str]) -> ItemRef | None:
        """A catalog relation in a query that also reads user relations: its current rows
        become a constant input (DESIGN §2, mixed queries)."""
        if self.system is None:
            return None
        got = self.system.relation_rows(self.session, tuple(parts))
        if got is None:
            return None
        columns, rows = got
        names = tuple(c for c, _ in columns)
        # columns of types the compute layer cannot carry (arrays, xid, …) enter as text
        textual = [t.name not in _COMPUTE_TYPES for _, t in columns]
        types = tuple(TEXT if tx else t for (_, t), tx in zip(columns, textual, strict=True))
        rows = [tuple(None if v is None else (_as_text(v, t) if tx else v) for v, (_, t), tx in zip(r, columns, textual, strict=True)) for r in rows]
        schema = parts[-2] if len(parts) >= 2 else "pg_catalog"
        return ItemRef(f"s:{schema}.{parts[-1]}", schema, parts[-1], "system", names, types, 0, (), HConstant(tuple(tuple(r) for r in rows), types))

    def view_hir(self, it: Item) -> HirRel:
        """A view's definition bound afresh (against the current catalog)."""
        stmt = st.classify(it.create_sql)
        assert isinstance(stmt, st.CreateView)
        b = Binder(self)
        bq = b.bind_query(stmt.query, top=False)
        return b._finish_nested(bq)


class Coordinator:
    def __init__(self, data_dir: str, spark_master: str = "local[2]", workers: int | None = None,
                 spark_conf: dict[str, str] | None = None, password: str | None = None) -> None:
        self.catalog = Catalog(data_dir)
        self.oracle = TimestampOracle(self.catalog)
        self.password = password
        self.write_lock = threading.Lock()
        self.compute = Compute(spark_master, workers, spark_conf or {})
        self._sessions: dict[int, Session] = {}
        self._compacting: set[str] = set()
        self._closed = False
        from server.system import SystemHandler

        self.system = SystemHandler(self)

    # ---- lifecycle ------------------------------------------------------------------
    def spark(self):
        """The SparkSession (started, or restarted after a loss, on demand: server.compute)."""
        return self.compute.spark()

    def close(self) -> None:
        self._closed = True
        self.compute.close()
        self.catalog.close()

    # ---- server.api.Coordinator -----------------------------------------------------
    def new_session(self, user: str, database: str, options: dict[str, str]) -> Session:
        s = Session(user, database, options)
        self._sessions[s.pid] = s
        return s

    def end_session(self, session: Session) -> None:
        self.cancel(session)
        self._sessions.pop(session.pid, None)

    def check_password(self, user: str, password: str) -> bool:
        return self.password is None or password == self.password

    def begin_simple_query(self, session: Session, statements: int) -> None:
        if statements > 1 and session.txn is None:
            session.txn = Transaction(implicit=True)

    def end_simple_query(self, session: Session, ok: bool) -> None:
        txn = session.txn
        if txn is None or not txn.implicit:
            return
        session.txn = None
        if ok and not txn.failed:
            self._commit_buffered(session, txn)

    def split_statements(self, sql: str) -> list[str]:
        return split_statements(sql)

    def cancel(self, session: Session, reason: str = "cancel") -> None:
        tag = session.running_tag
        if tag is None:
            return
        session.cancel_reason = reason
        spark = self.compute.current
        if spark is not None:
            try:
                spark.sparkContext.cancelJobGroup(tag)
            except Exception:  # noqa: BLE001 - best effort
                log.exception("cancelJobGroup failed")

    def prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared:
        try:
            return self._prepare(session, sql, param_types)
        except Exception:
            if session.txn is not None:
                session.txn.failed = True
            raise

    def _prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared:
        system = self.system.prepare(session, sql, param_types)
        if system is not None:
            return system
        stmt = st.classify(sql)
        planned = _Planned(stmt, catalog_version=self.catalog.version)
        columns: tuple[ColumnDesc, ...] | None = None
        match stmt:
            case st.Query(ast=ast) | st.CopyTo(query=ast):
                b = Binder(_Resolver(self.catalog, session, self.system), param_types)
                if isinstance(stmt, st.Query):
                    b.unary_plus = stmt.unary_plus
                bound = b.bind_query(ast)
                planned.bound = bound
                planned.param_types = b.param_types()
                if isinstance(stmt, st.Query):
                    columns = self._columns(bound)
            case st.Insert() | st.Update() | st.Delete():
                b = Binder(_Resolver(self.catalog, session, self.system), param_types)
                planned.extra = self._plan_write(b, stmt, session)
                planned.param_types = b.param_types()
            case st.Explain(target=target):
                if isinstance(target, st.Query):
                    b = Binder(_Resolver(self.catalog, session, self.system), param_types)
                    b.unary_plus = target.unary_plus
                    planned.bound = b.bind_query(target.ast)
                    planned.param_types = b.param_types()
                name = {"raw": "Raw Plan", "decorrelated": "Decorrelated Plan", "optimized": "Optimized Plan", "physical": "Physical Plan"}[stmt.stage]
                columns = (ColumnDesc(name, TEXT),)
            case st.ShowVar(name=name):
                if name == "all":
                    columns = (ColumnDesc("name", TEXT), ColumnDesc("setting", TEXT), ColumnDesc("description", TEXT))
                else:
                    session.get(name)
                    columns = (ColumnDesc(name, TEXT),)
            case st.ShowObjects(what=what):
                columns = {
                    "tables": (ColumnDesc("name", TEXT), ColumnDesc("comment", TEXT)),
                    "schemas": (ColumnDesc("name", TEXT), ColumnDesc("comment", TEXT)),
                    "databases": (ColumnDesc("name", TEXT), ColumnDesc("comment", TEXT)),
                    "columns": (ColumnDesc("name", TEXT), ColumnDesc("nullable", SqlType("bool")), ColumnDesc("type", TEXT), ColumnDesc("comment", TEXT)),
                }[what]
            case _:
                pass
        params = tuple(planned.param_types)
        return Prepared(sql, params, columns, planned)

    def execute(self, session: Session, prepared: Prepared, params: list[Any]) -> Result:
        if not isinstance(prepared.plan, _Planned):
            return prepared.plan.execute(session, params)  # a SystemHandler plan
        planned: _Planned = prepared.plan
        if planned.catalog_version != self.catalog.version and (planned.bound is not None or planned.extra is not None):
            planned = self._replan(session, prepared)
        stmt = planned.stmt
        txn = session.txn
        if txn is not None and txn.failed and not (isinstance(stmt, st.TxnControl) and stmt.action in ("rollback", "commit")):
            raise SqlError(IN_FAILED_SQL_TRANSACTION, "current transaction is aborted, commands ignored until end of transaction block")
        try:
            return self._execute(session, planned, params, prepared)
        except SqlError:
            if session.txn is not None:
                session.txn.failed = True
            raise
        except Exception as e:
            if session.txn is not None:
                session.txn.failed = True
            lost = self.compute.lost_error(self.compute.current, e)
            if lost is not None:
                raise lost from None
            raise

    def _replan(self, session: Session, prepared: Prepared) -> _Planned:
        """A prepared statement whose catalog changed since it was planned is planned again
        (Postgres' plan invalidation); its result shape must not change."""
        fresh = self._prepare(session, prepared.sql, list(prepared.param_types))
        old_shape = [(c.name, c.type) for c in prepared.columns or ()]
        new_shape = [(c.name, c.type) for c in fresh.columns or ()]
        if old_shape != new_shape or tuple(fresh.param_types) != tuple(prepared.param_types):
            raise SqlError(FEATURE_NOT_SUPPORTED, "cached plan must not change result type")
        prepared.plan = fresh.plan
        return fresh.plan

    # ---- dispatch -------------------------------------------------------------------
    def _execute(self, session: Session, planned: _Planned, params: list[Any], prepared: Prepared) -> Result:
        stmt = planned.stmt
        match stmt:
            case st.Empty():
                return CommandResult("EMPTY")
            case st.Query():
                assert planned.bound is not None
                return self._select(session, planned.bound, params, planned.param_types)
            case st.Explain(target=st.Query()) if "analyze" in stmt.options:
                assert planned.bound is not None
                text = self._explain_analyze(session, planned.bound, params, planned.param_types)
                return RowsResult(prepared.columns or (), iter([[(text,)]]))
            case st.Explain(target=st.Query()):
                assert planned.bound is not None
                text = self._explain(session, stmt, planned.bound, params, planned.param_types)
                return RowsResult(prepared.columns or (), iter([[(text,)]]))
            case st.Explain():
                return RowsResult(prepared.columns or (), iter([[(self._explain_object(session, stmt),)]]))
            case st.Deallocate(name=name):
                session.deallocate(name)
                return CommandResult("DEALLOCATE ALL" if name is None else "DEALLOCATE")
            case st.CreateView():
                return self._create_view(session, stmt)
            case st.CreateIndex():
                return self._create_index(session, stmt)
            case st.Insert() | st.Update() | st.Delete():
                return self._write(session, stmt, planned.extra, params, planned.param_types)
            case st.CreateTable():
                return self._create_table(session, stmt)
            case st.DropObjects():
                return self._drop(session, stmt)
            case st.CreateSchema(name=name, if_not_exists=ine):
                if not ine or not self.catalog.schema_exists(name):
                    self.catalog.create_schema(name, if_not_exists=ine)
                elif ine:
                    session.notice(f'schema "{name}" already exists, skipping')
                return CommandResult("CREATE SCHEMA")
            case st.DropSchema(names=names, if_exists=ie, cascade=cascade):
                for n in names:
                    if ie and not self.catalog.schema_exists(n):
                        session.notice(f'schema "{n}" does not exist, skipping')
                        continue
                    dropped = self.catalog.drop_schema(n, if_exists=ie, cascade=cascade)
                    self.compute.drop_cached([it.shard_id for it in dropped if it.shard_id])
                return CommandResult("DROP SCHEMA")
            case st.SetVar(name=name, value=value):
                session.set(name, value)
                return CommandResult("SET")
            case st.ResetVar(name=name):
                if name is None:
                    for k in SESSION_VARS:
                        if k not in ("server_version", "server_version_num", "server_encoding", "integer_datetimes", "is_superuser", "mz_version"):
                            session.set(k, None)
                else:
                    session.set(name, None)
                return CommandResult("RESET")
            case st.ShowVar(name=name):
                if name == "all":
                    rows = [(k, v, "") for k, v in sorted(session.vars.items())]
                    return RowsResult(prepared.columns or (), iter([rows]))
                return RowsResult(prepared.columns or (), iter([[(session.get(name),)]]), tag=lambda n: "SHOW")
            case st.ShowObjects():
                return RowsResult(prepared.columns or (), iter([self._show(session, stmt)]))
            case st.TxnControl():
                return self._txn_control(session, stmt)
            case st.CopyFrom():
                return self._copy_from(session, stmt)
            case st.CopyTo():
                assert planned.bound is not None
                res = self._select(session, planned.bound, params, planned.param_types)
                o = stmt.options
                fmt = o.get("format", "text").lower()
                if fmt not in ("text", "csv"):
                    raise unsupported(f"COPY TO with format {fmt}")
                csv = fmt == "csv"
                return CopyOutResult(
                    res.columns, res.batches, csv=csv,
                    delimiter=o.get("delimiter", "," if csv else "\t"),
                    null=o.get("null", "" if csv else "\\N"),
                    header=o.get("header", "false").lower() in ("true", "on", "1"),
                )
        raise unsupported(type(stmt).__name__)

    # ---- queries --------------------------------------------------------------------
    def _columns(self, b: BoundQuery) -> tuple[ColumnDesc, ...]:
        origins = b.origins or tuple((0, 0) for _ in b.types)
        return tuple(ColumnDesc(n, t, o[0], o[1]) for n, t, o in zip(b.names, b.types, origins, strict=True))

    @staticmethod
    def _flags(session: Session) -> PlanFlags:
        return PlanFlags(
            enable_monotonic_oneshot_selects=session.flag("enable_monotonic_oneshot_selects"),
            enable_consolidate_after_union_negate=session.flag("enable_consolidate_after_union_negate"),
        )

    def _explain(self, session: Session, e: st.Explain, bound: BoundQuery, params, param_types) -> str:
        return pipeline.explain(e.stage, bound, e.options, self._flags(session), params, param_types, e.format,
                                sizes=lambda m: self._sizes(m, self._read_ts(session)))

    def _sizes(self, m: Mir, ts: int) -> dict[str, int]:
        """Rows of the storage collections `m` reads, at `ts` (from the catalog's batch
        metadata; no data is read): the join planner's sizes."""
        out: dict[str, int] = {}
        for i in pipeline.storage_ids(m):
            item = self.catalog.get_item_by_id(i)
            if item is not None and item.shard_id is not None and item.kind == "table":
                out[i] = sum(b.rows for b in self.catalog.shard_batches(item.shard_id, ts))
        return out

    def _explain_analyze(self, session: Session, bound: BoundQuery, params, param_types) -> str:
        """Run the one-shot dataflow and annotate its physical plan with the records each
        node produced."""
        ts = self._read_ts(session)
        m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: self._sizes(m, ts))
        df = pipeline.dataflow(m, bound.finishing, flags=self._flags(session))
        counts: dict[int, int] = {}
        self._run(session, df, ts, bound, record_counts=counts)
        return pipeline.explain_dataflow_text(df, node_ids=True, records=counts)

    def _explain_object(self, session: Session, e: st.Explain) -> str:
        """EXPLAIN for CREATE MATERIALIZED VIEW / CREATE INDEX / VIEW / MATERIALIZED VIEW / INDEX:
        the maintained plan (not single-time), headed by the object's name."""
        resolver = _Resolver(self.catalog, session, self.system)
        target = e.target
        if isinstance(target, st.ExplainObject):
            kind = {"view": "view", "materialized view": "materialized-view", "index": "index"}[target.kind]
            item = resolver.item(target.name)
            if item is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(target.name)}'")
            if item.kind != kind:
                raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is not a {target.kind}")
            target = st.classify(item.create_sql)
            assert isinstance(target, (st.CreateView, st.CreateIndex))
            if isinstance(target, st.CreateIndex):
                target = replace(target, name=item.name)
        if isinstance(target, st.CreateView):
            schema, name = self._new_name(session, target.name)
            b = Binder(resolver)
            bound = b.bind_query(target.query, top=False)
            rel = b._finish_nested(bound)
            if not target.materialized:
                if e.stage == "physical":
                    raise unsupported("EXPLAIN PHYSICAL PLAN FOR VIEW (a view has no dataflow; create an index on it)")
                m = pipeline.to_mir_rel(rel) if e.stage in ("raw", "decorrelated") else pipeline.optimize(pipeline.to_mir_rel(rel))
                if e.format == "json":
                    return pipeline.explain_mir_json(m, e.stage, f"materialize.{schema}.{name}")
                return pipeline.explain_mir_text(m, e.options)
            m = pipeline.to_mir_rel(rel)
            return self._explain_maintained(e, m, f"materialize.{schema}.{name}")
        assert isinstance(target, st.CreateIndex)
        on, keys, _ = self._index_parts(resolver, target)
        name = target.name or self._index_name(on, target)
        m = pipeline.arrange_by(self._object_mir(resolver, on), keys)
        return self._explain_maintained(e, m, f"materialize.{on.schema}.{name}")

    def _explain_maintained(self, e: st.Explain, m, header: str) -> str:
        if e.stage != "raw" and e.stage != "decorrelated":
            m = pipeline.optimize(m)
        if e.stage != "physical":
            if e.format == "json":
                return pipeline.explain_mir_json(m, e.stage, header)
            return pipeline.explain_mir_text(m, e.options)
        df = pipeline.dataflow(m, None, name=header, single_time=False)
        return pipeline.explain_lir_json(df) if e.format == "json" else pipeline.explain_lir_text(df, e.options)

    def _object_mir(self, resolver: _Resolver, item: Item):
        """MIR reading an indexed object: a view's definition, or its storage."""
        if item.kind == "view":
            return pipeline.to_mir_rel(resolver.view_hir(item))
        return pipeline.get_storage(item.id, item.qualified_name, tuple(c.type for c in item.columns))

    def _new_name(self, session: Session, parts: tuple[str, ...]) -> tuple[str, str]:
        if len(parts) == 3 and parts[0] != "materialize":
            raise SqlError("3D000", f'database "{parts[0]}" does not exist')
        schema = parts[-2] if len(parts) >= 2 else (session.search_path() or ["public"])[0]
        if not self.catalog.schema_exists(schema):
            raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
        return schema, parts[-1]

    def _check_cluster(self, cluster: str | None) -> None:
        if cluster is not None and cluster != "quickstart":
            raise SqlError("42704", f"unknown cluster '{cluster}'")

    def _create_view(self, session: Session, s: st.CreateView) -> Result:
        schema, name = self._new_name(session, s.name)
        self._check_cluster(s.cluster)
        tag = "CREATE MATERIALIZED VIEW" if s.materialized else "CREATE VIEW"
        existing = self.catalog.get_item(schema, name)
        if existing is not None and s.if_not_exists:
            session.notice(f'{"materialized view" if s.materialized else "view"} "{name}" already exists, skipping', "42P07")
            return CommandResult(tag)
        b = Binder(_Resolver(self.catalog, session, self.system))
        bound = b.bind_query(s.query, top=False)
        if b.params:
            raise SqlError("42P02", "there is no parameter $1")
        names = list(bound.names)
        if len(s.columns) > len(names):
            raise SqlError(SYNTAX_ERROR, "CREATE VIEW specifies more column names than columns")
        for i, c in enumerate(s.columns):
            names[i] = c
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SqlError(DUPLICATE_COLUMN, f'column "{sorted(dup)[0]}" specified more than once')
        cols = [Column(n, t, True) for n, t in zip(names, bound.types, strict=True)]
        kind = "materialized-view" if s.materialized else "view"
        if existing is not None and s.or_replace:
            if existing.kind != kind:
                raise SqlError(WRONG_OBJECT_TYPE, f"{existing.qualified_name} is a {existing.kind_word}")
            if existing.id in b.dependencies:
                raise SqlError("42P17", f"cannot replace {existing.qualified_name}: the new definition reads it")
            if self.catalog.dependents(existing.id):
                raise unsupported(f"CREATE OR REPLACE of {existing.qualified_name}, which other objects depend on")
            with self.write_lock:
                self.catalog.drop_items([existing.id])
        self.catalog.create_item(schema=schema, name=name, kind=kind, create_sql=s.sql, columns=cols,
                                 depends_on=tuple(b.dependencies), with_shard=s.materialized)
        return CommandResult(tag)

    def _index_parts(self, resolver: _Resolver, s: st.CreateIndex) -> tuple[Item, tuple, tuple[str, ...]]:
        on = resolver.item(s.on)
        if on is None:
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.on)}'")
        if on.kind not in ("table", "view", "materialized-view", "source"):
            raise SqlError(WRONG_OBJECT_TYPE, f"cannot create an index on {on.kind_word} {on.qualified_name}")
        scope = Scope([ScopeColumn(on.name, c.name, c.type) for c in on.columns])
        b = Binder(resolver)
        if s.default:
            texts = tuple(c.name for c in on.columns)
            keys = tuple(ColRef(i, c.type) for i, c in enumerate(on.columns))
        else:
            texts = s.keys
            keys = tuple(b.scalar(st.parse_sql(f"SELECT {k}").expressions[0], scope) for k in s.keys)
        return on, keys, texts

    def _index_name(self, on: Item, s: st.CreateIndex) -> str:
        if s.default:
            base = f"{on.name}_primary_idx"
        elif all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) for k in s.keys):
            base = f"{on.name}_{'_'.join(k.lower() for k in s.keys)}_idx"
        else:
            base = f"{on.name}_expr_idx"
        name, n = base, 1
        while self.catalog.get_item(on.schema, name) is not None:
            name = f"{base}{n}"
            n += 1
        return name

    def _create_index(self, session: Session, s: st.CreateIndex) -> Result:
        self._check_cluster(s.cluster)
        resolver = _Resolver(self.catalog, session, self.system)
        on, keys, texts = self._index_parts(resolver, s)
        name = s.name or self._index_name(on, s)
        if self.catalog.get_item(on.schema, name) is not None and s.if_not_exists:
            session.notice(f'index "{name}" already exists, skipping', "42P07")
            return CommandResult("CREATE INDEX")
        del keys
        self.catalog.create_item(schema=on.schema, name=name, kind="index", create_sql=s.sql, columns=(),
                                 depends_on=(on.id,), with_shard=False, on_id=on.id, index_keys=texts)
        return CommandResult("CREATE INDEX")

    def _read_ts(self, session: Session) -> int:
        txn = session.txn
        if txn is not None and txn.implicit:
            # A read after writes in one simple query: the writes commit first so the read
            # sees them (Postgres' read-your-writes; atomicity then ends at the read).
            self._commit_buffered(session, txn)
            return self.oracle.read_ts()
        if txn is not None:
            if txn.kind == "write":
                raise SqlError(INVALID_TRANSACTION_STATE, "transaction in write-only mode")
            txn.kind = "read"
            if txn.read_ts is None:
                txn.read_ts = self.oracle.read_ts()
            return txn.read_ts
        return self.oracle.read_ts()

    def _select(self, session: Session, bound: BoundQuery, params, param_types) -> RowsResult:
        ts = self._read_ts(session)  # also enforces the transaction's read/write mode
        m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: self._sizes(m, ts))
        columns = self._columns(bound)
        f = bound.finishing
        if isinstance(m, Constant):
            rows = _finish_python(m.rows, f)
            return RowsResult(columns, _batched(rows))
        df = pipeline.dataflow(m, f, flags=self._flags(session))
        return RowsResult(columns, self._run_lazily(session, df, ts, bound))

    def _run_lazily(self, session: Session, df: lir.Dataflow, ts: int, bound: BoundQuery) -> Iterator[list[tuple]]:
        rows = self._run(session, df, ts, bound)
        yield from _batched(rows)

    def _run(self, session: Session, df: lir.Dataflow, ts: int, bound: BoundQuery | None,
             record_counts: dict[int, int] | None = None) -> list[tuple]:
        """Render a one-shot dataflow at `ts`, collect, apply the finishing. With
        `record_counts`, also count the records every plan node produced (EXPLAIN ANALYZE)."""
        from compute.render import oneshot
        from compute.render.errors import translate_spark_error
        from compute.render.spark import TINY_INPUT_ROWS, collect_arrow, session_for

        spark = self.spark()
        done: list[Any] = []
        rows_read = [0]

        def read_source(item_id: str, types: tuple[SqlType, ...]) -> oneshot.Rel:
            item = self.catalog.get_item_by_id(item_id)
            if item is None or item.shard_id is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown relation {item_id}")
            if item.kind == "materialized-view":
                # Not maintained yet: its contents at `ts` are its definition evaluated at ts.
                hir = _Resolver(self.catalog, session, self.system).view_hir(item)
                sub = pipeline.dataflow(pipeline.optimize(pipeline.to_mir_rel(hir, now=ts)), None, name=item.qualified_name, flags=self._flags(session))
                outer, ctx.source_mfps = ctx.source_mfps, dict(sub.source_mfps)
                try:
                    return oneshot.consolidate(oneshot.render(sub.plan, ctx), ctx)
                finally:
                    ctx.source_mfps = outer
            shard = item.shard_id
            batches = self.catalog.shard_batches(shard, ts)
            rows_read[0] += sum(b.rows for b in batches)
            view, release = self.compute.sources().read(shard, batches, types, ts, lambda: self.catalog.lease_batches(shard, ts))
            done.append(release)
            return oneshot.Rel(f"SELECT * FROM global_temp.{view}", len(types))

        tag = f"mzs-{session.pid}-{uuid.uuid4().hex[:8]}"
        timeout_ms = session.statement_timeout_ms()
        timer = None
        session.cancel_reason = None
        session.running_tag = tag
        sc = spark.sparkContext
        if timeout_ms > 0:
            timer = threading.Timer(timeout_ms / 1000, self.cancel, args=(session, "timeout"))
            timer.daemon = True
            timer.start()
        def check_interrupt() -> None:
            """Between the Spark jobs of a recursion: stop if the statement was cancelled."""
            if (e := _cancel_error(session)) is not None:
                raise e

        ctx = oneshot.RenderContext(spark, read_source, planner=None if record_counts is not None else (lambda: session_for(rows_read[0])),
                                    observed={} if record_counts is not None else None, source_mfps=dict(df.source_mfps),
                                    check_interrupt=check_interrupt,
                                    tiny=lambda: record_counts is None and rows_read[0] < TINY_INPUT_ROWS)
        fin = df.finishing
        types = df.types
        try:
            sc.setJobGroup(tag, f"session {session.pid}", interruptOnCancel=True)
            out = oneshot.render(df.plan, ctx)
            if not non_negative(df.plan):
                out = oneshot.consolidate(out, ctx)
            text = oneshot.finish(out, fin, ctx)
            table = collect_arrow(ctx.session().sql(text), small=ctx.tiny())
            # a SELECT's result (writes and EXPLAIN ANALYZE are bounded by Spark's maxResultSize only)
            if bound is not None and record_counts is None and table.nbytes > session.max_result_bytes():
                raise SqlError(OUT_OF_MEMORY, f"result exceeds max size of {session.get('max_query_result_size')}")
            rows = oneshot.arrow_rows(table, types)
            if record_counts is not None:
                record_counts.update(oneshot.record_counts(ctx))
        except SqlError:
            raise
        except Exception as e:  # noqa: BLE001
            raise (self.compute.lost_error(spark, e) or _cancel_error(session) or translate_spark_error(e)) from None
        finally:
            if timer is not None:
                timer.cancel()
            session.running_tag = None
            # frees Spark state of a driver that may be gone: each step on its own
            for release in [ctx.release, lambda: sc.setLocalProperty("spark.jobGroup.id", None), *done]:
                try:
                    release()
                except Exception as e:  # noqa: BLE001
                    if self.compute.lost_error(spark, e) is None:
                        raise
        if any(d < 0 for _, d in rows):
            raise SqlError(INTERNAL_ERROR, "Invalid data in source, saw negative accumulation")
        f = fin if fin is not None else lir.Finishing((), None, 0, tuple(range(len(types))))
        return _finish_python(rows, f, already_sorted=True)

    # ---- writes ---------------------------------------------------------------------
    def _target(self, session: Session, table: Any) -> Item:
        parts = [p.name for p in table.parts]
        item = _Resolver(self.catalog, session, self.system).item(parts)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(parts)}" does not exist')
        if item.kind != "table":
            raise SqlError(WRONG_OBJECT_TYPE, f"cannot modify {item.kind_word} {item.qualified_name}")
        return item

    def _plan_write(self, b: Binder, stmt, session: Session) -> tuple[Item, HirRel, Any]:
        """Returns (table, HIR producing rows, extra): for INSERT the new rows; for UPDATE
        and DELETE the affected old rows followed by (UPDATE) the new values."""
        ast = stmt.ast
        if isinstance(stmt, st.Insert):
            target = ast.this
            cols_given = None
            if target.__class__.__name__ == "Schema":
                cols_given = [i.name for i in target.expressions]
                target = target.this
            item = self._target(session, target)
            if ast.args.get("returning"):
                raise unsupported("INSERT ... RETURNING")
            if ast.args.get("conflict"):
                raise unsupported("INSERT ... ON CONFLICT")
            names = [c.name for c in item.columns]
            if cols_given is None:
                cols_given = names
            for c in cols_given:
                if c not in names:
                    raise SqlError(UNDEFINED_COLUMN, f'column "{c}" of relation "{item.name}" does not exist')
            if len(set(cols_given)) != len(cols_given):
                raise SqlError(DUPLICATE_COLUMN, "column specified more than once")
            src = ast.expression
            target_types = [item.columns[names.index(c)].type for c in cols_given]
            self._seed_value_params(b, src, target_types)
            b.values_hint = target_types
            try:
                bq = b.bind_query(src, top=False)
            finally:
                b.values_hint = None
            rel = b._finish_nested(bq)
            if len(bq.types) > len(cols_given):
                raise SqlError(SYNTAX_ERROR, "INSERT has more expressions than target columns")
            cols_given = cols_given[: len(bq.types)]
            n_in = len(bq.types)
            exprs = []
            for col in item.columns:
                if col.name in cols_given:
                    k = cols_given.index(col.name)
                    exprs.append(b.assignment_cast(ColRef(k, bq.types[k]), col.type, col.name))
                else:
                    exprs.append(self._default(b, col))
            out = HProject(HMap(rel, tuple(exprs)), tuple(range(n_in, n_in + len(exprs))))
            return item, out, "insert"
        if isinstance(stmt, (st.Update, st.Delete)):
            item = self._target(session, ast.this)
            alias = ast.this.alias_or_name
            scope = Scope([ScopeColumn(alias, c.name, c.type, item.oid, i + 1) for i, c in enumerate(item.columns)])
            from sql.hir import HFilter, HGet

            rel: HirRel = HGet(item.id, item.qualified_name, tuple(c.type for c in item.columns))
            if ast.args.get("using") or ast.args.get("from") or ast.args.get("from_"):
                raise unsupported("UPDATE/DELETE with additional tables")
            if (w := ast.args.get("where")) is not None:
                rel = HFilter(rel, (b._predicate(w.this, scope, "WHERE"),))
            if isinstance(stmt, st.Delete):
                return item, rel, "delete"
            assigns: dict[int, Any] = {}
            for eq in ast.expressions:
                col = eq.this.name
                idx = next((i for i, c in enumerate(item.columns) if c.name == col), None)
                if idx is None:
                    raise SqlError(UNDEFINED_COLUMN, f'column "{col}" of relation "{item.name}" does not exist')
                h = b.scalar(eq.expression, scope)
                assigns[idx] = b.assignment_cast(h, item.columns[idx].type, col)
            new = tuple(assigns.get(i, ColRef(i, c.type)) for i, c in enumerate(item.columns))
            return item, HMap(rel, new), "update"  # old row ++ new row
        raise AssertionError(stmt)

    @staticmethod
    def _seed_value_params(b: Binder, src: Any, types: list[SqlType]) -> None:
        """`INSERT ... VALUES ($1, ...)`: a bare parameter takes its target column's type."""
        from sqlglot import exp

        if not isinstance(src, exp.Values):
            return
        for tup in src.expressions:
            elems = tup.expressions if isinstance(tup, exp.Tuple) else [tup]
            for e, t in zip(elems, types, strict=False):
                if isinstance(e, exp.Parameter) or isinstance(e, exp.Placeholder):
                    n = int(e.this.this if isinstance(e.this, exp.Literal) else e.name)
                    b.params.setdefault(n, t)

    def _default(self, b: Binder, col: Column):
        if col.default_sql:
            e = st.parse_sql(f"SELECT {col.default_sql}").expressions[0]
            h = b.scalar(e, Scope())
            return b.assignment_cast(h, col.type, col.name)
        return Literal(None, col.type)

    def _eval_rows(self, session: Session, rel: HirRel, params, param_types, ts: int) -> list[tuple[tuple, int]]:
        m = optimize(lower_to_mir(rel, params, param_types, now=ts))
        if isinstance(m, Constant):
            return list(m.rows)
        df = pipeline.dataflow(m, None, name="write", flags=self._flags(session))
        return [(r, 1) for r in self._run(session, df, ts, None)]

    def _write(self, session: Session, stmt, extra, params, param_types) -> Result:
        item, rel, kind = extra
        txn = session.txn
        if txn is not None and txn.implicit and kind != "insert":
            # UPDATE/DELETE read the table: earlier writes of the query commit first
            self._commit_buffered(session, txn)
            txn = None
        if txn is not None:
            if txn.kind == "read":
                raise SqlError(INVALID_TRANSACTION_STATE, "transaction in read-only mode")
            if kind != "insert":
                raise SqlError(ACTIVE_SQL_TRANSACTION, f"{kind.upper()} cannot be run inside a transaction block")
            m = optimize(lower_to_mir(rel, params, param_types))
            if isinstance(m, Constant):
                got = list(m.rows)
            elif txn.implicit:
                got = self._eval_rows(session, rel, params, param_types, self.oracle.read_ts())
            else:
                raise SqlError(INVALID_TRANSACTION_STATE, "INSERT with a query cannot be run inside a transaction block (transaction in write-only mode)")
            txn.kind = "write"
            rows = [r for r, d in got for _ in range(d)]
            self._check_not_null(item, rows)
            txn.writes.append((item, rows, [1] * len(rows)))
            return CommandResult(f"INSERT 0 {len(rows)}")
        with self.write_lock:
            read_ts = self.oracle.read_ts()
            if kind == "insert":
                got = self._eval_rows(session, rel, params, param_types, read_ts)
                rows = [r for r, d in got for _ in range(d)]
                self._check_not_null(item, rows)
                self._commit(session, [(item, rows, [1] * len(rows))])
                return CommandResult(f"INSERT 0 {len(rows)}")
            got = self._eval_rows(session, rel, params, param_types, read_ts)
            n = len(item.columns)
            if kind == "delete":
                rows = [r for r, d in got for _ in range(d)]
                self._commit(session, [(item, rows, [-1] * len(rows))])
                return CommandResult(f"DELETE {len(rows)}")
            old = [r[:n] for r, d in got for _ in range(d)]
            new = [r[n:] for r, d in got for _ in range(d)]
            self._check_not_null(item, new)
            self._commit(session, [(item, old + new, [-1] * len(old) + [1] * len(new))])
            return CommandResult(f"UPDATE {len(old)}")

    def _check_not_null(self, item: Item, rows: list[tuple]) -> None:
        for i, c in enumerate(item.columns):
            if not c.nullable and any(r[i] is None for r in rows):
                raise _not_null_error(item, c.name)

    def _commit(self, session: Session, writes: list[tuple[Item, list[tuple], list[int]]]) -> int:
        """Write batches durably and record them at one fresh timestamp. Caller holds
        the write lock."""
        ts = self.oracle.write_ts()
        files = []
        try:
            for item, rows, diffs in writes:
                if not rows:
                    continue
                assert item.shard_id is not None
                table = _batch_table(item, rows, diffs, ts)
                files.append((item.shard_id, self.catalog.storage.write_batch(item.shard_id, table)))
        except BaseException:
            self.catalog.storage.delete_files([bf.path for _, bf in files])
            raise
        self.catalog.commit_writes(files, ts)
        for sid, _ in files:
            self._maybe_compact(sid)
        return ts

    def _maybe_compact(self, shard_id: str) -> None:
        if shard_id in self._compacting or len(self.catalog.shard_batches(shard_id)) < COMPACT_AFTER_BATCHES:
            return
        self._compacting.add(shard_id)

        def run() -> None:
            try:
                self.catalog.compact(shard_id, self.oracle.read_ts())
            except Exception:  # noqa: BLE001
                log.exception("compaction of %s failed", shard_id)
            finally:
                self._compacting.discard(shard_id)

        threading.Thread(target=run, name=f"compact-{shard_id}", daemon=True).start()

    # ---- transactions ---------------------------------------------------------------
    def _txn_control(self, session: Session, stmt: st.TxnControl) -> Result:
        if stmt.action == "begin":
            if session.txn is not None and session.txn.implicit:
                session.txn.implicit = False
                session.txn.read_only = stmt.read_only
                return CommandResult("BEGIN")
            if session.txn is not None:
                session.notice("there is already a transaction in progress", "25001", "WARNING")
                return CommandResult("BEGIN")
            session.txn = Transaction(read_only=stmt.read_only)
            return CommandResult("BEGIN")
        txn = session.txn
        session.txn = None
        if stmt.action == "rollback":
            if txn is None or txn.implicit:
                session.notice("there is no transaction in progress", "25P01", "WARNING")
            return CommandResult("ROLLBACK")
        if txn is None or txn.implicit:
            session.notice("there is no transaction in progress", "25P01", "WARNING")
        if txn is None:
            return CommandResult("COMMIT")
        if txn.failed:
            return CommandResult("ROLLBACK")
        self._commit_buffered(session, txn)
        return CommandResult("COMMIT")

    def _commit_buffered(self, session: Session, txn: Transaction) -> None:
        """Commit a transaction's buffered writes atomically at one timestamp."""
        writes, txn.writes = txn.writes, []
        txn.kind = None
        if not writes:
            return
        merged: dict[str, tuple[Item, list[tuple], list[int]]] = {}
        for item, rows, diffs in writes:
            cur = merged.setdefault(item.id, (item, [], []))
            cur[1].extend(rows)
            cur[2].extend(diffs)
        with self.write_lock:
            for item_id in merged:
                if self.catalog.get_item_by_id(item_id) is None:
                    raise SqlError(UNDEFINED_TABLE, "a table written in this transaction was dropped")
            self._commit(session, list(merged.values()))

    # ---- DDL ------------------------------------------------------------------------
    def _create_table(self, session: Session, stmt: st.CreateTable) -> Result:
        ast = stmt.ast
        schema_node = ast.this
        table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
        parts = [p.name for p in table.parts]
        if len(parts) == 3 and parts[0] != "materialize":
            raise SqlError("3D000", f'database "{parts[0]}" does not exist')
        schema = parts[-2] if len(parts) >= 2 else session.search_path()[0] if session.search_path() else "public"
        name = parts[-1]
        if not self.catalog.schema_exists(schema):
            raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
        if ast.args.get("exists") and self.catalog.get_item(schema, name) is not None:
            session.notice(f'relation "{name}" already exists, skipping', "42P07")
            return CommandResult("CREATE TABLE")
        props = list(ast.args["properties"].expressions) if ast.args.get("properties") is not None else []
        with_data = True
        for prop in props:
            if isinstance(prop, exp.WithDataProperty) and ast.expression is not None:
                with_data = not prop.args.get("no")
            else:
                raise unsupported(f"CREATE TABLE ... {prop.sql(dialect='postgres')}")
        if ast.expression is not None:
            return self._create_table_as(session, stmt, schema, name, with_data)
        cols: list[Column] = []
        pk_cols: set[str] = set()
        for d in schema_node.expressions:
            kind = d.__class__.__name__
            if kind == "ColumnDef":
                nullable = True
                default = None
                for c in d.args.get("constraints") or []:
                    ck = c.args.get("kind")
                    cname = ck.__class__.__name__
                    if cname == "NotNullColumnConstraint":
                        nullable = bool(ck.args.get("allow_null"))
                    elif cname == "PrimaryKeyColumnConstraint":
                        nullable = False
                    elif cname == "DefaultColumnConstraint":
                        default = ck.this.sql(dialect="postgres")
                    elif cname in ("UniqueColumnConstraint", "CheckColumnConstraint", "Reference", "CollateColumnConstraint"):
                        pass
                    else:
                        raise unsupported(f"column constraint {c.sql(dialect='postgres')}")
                if d.args.get("kind") is None:
                    raise SqlError(SYNTAX_ERROR, f'column "{d.name}" has no type')
                t = sql_type_of(d.args["kind"])
                if any(c.name == d.name for c in cols):
                    raise SqlError(DUPLICATE_COLUMN, f'column "{d.name}" specified more than once')
                cols.append(Column(d.name, t, nullable, default))
            elif kind == "PrimaryKey":
                pk_cols.update(e.name for e in d.expressions)
            elif kind in ("UniqueColumnConstraint", "Constraint", "CheckColumnConstraint", "ForeignKey"):
                pass
            else:
                raise unsupported(f"table element {d.sql(dialect='postgres')}")
        cols = [Column(c.name, c.type, False if c.name in pk_cols else c.nullable, c.default_sql) for c in cols]
        # validate defaults now
        b = Binder(_Resolver(self.catalog, session, self.system))
        for c in cols:
            if c.default_sql:
                self._default(b, c)
        self.catalog.create_item(schema=schema, name=name, kind="table", create_sql=stmt.sql, columns=cols, with_shard=True)
        return CommandResult("CREATE TABLE")

    def _create_table_as(self, session: Session, stmt: st.CreateTable, schema: str, name: str, with_data: bool) -> Result:
        """CREATE TABLE t [(c, ..)] AS q [WITH [NO] DATA] = CREATE TABLE t with q's column
        names and types (unknown-typed columns are text, as in Postgres), then INSERT INTO t
        q at one timestamp."""
        ast = stmt.ast
        b = Binder(_Resolver(self.catalog, session, self.system))
        bound = b.bind_query(ast.expression, top=False)
        names = list(bound.names)
        given = [i.name for i in ast.this.expressions] if isinstance(ast.this, exp.Schema) else []
        if len(given) > len(names):
            raise SqlError(SYNTAX_ERROR, "too many column names were specified")
        names[: len(given)] = given
        for n in names:
            if names.count(n) > 1:
                raise SqlError(DUPLICATE_COLUMN, f'column "{n}" specified more than once')
        types = [TEXT if t.name == "unknown" else t for t in bound.types]
        cols = [Column(n, t, True, None) for n, t in zip(names, types, strict=True)]
        col_sql = ", ".join(f"{exp.to_identifier(n, quoted=True).sql(dialect='postgres')} {t.pg_format()}" for n, t in zip(names, types, strict=True))
        create_sql = f"CREATE TABLE {exp.to_identifier(schema, quoted=True).sql(dialect='postgres')}.{exp.to_identifier(name, quoted=True).sql(dialect='postgres')} ({col_sql})"
        self.catalog.create_item(schema=schema, name=name, kind="table", create_sql=create_sql, columns=cols, with_shard=True)
        if not with_data:
            return CommandResult("CREATE TABLE AS")
        target = exp.Table(this=exp.to_identifier(name, quoted=True), db=exp.to_identifier(schema, quoted=True))
        ins = st.Insert(exp.Insert(this=target, expression=ast.expression))
        wb = Binder(_Resolver(self.catalog, session, self.system))
        extra = self._plan_write(wb, ins, session)
        res = self._write(session, ins, extra, [], wb.param_types())
        n = res.tag.split()[-1] if isinstance(res, CommandResult) else "0"
        return CommandResult(f"SELECT {n}")

    def _drop(self, session: Session, stmt: st.DropObjects) -> Result:
        kind = {"table": "table", "view": "view", "materialized view": "materialized-view", "index": "index", "source": "source"}[stmt.kind]
        resolver = _Resolver(self.catalog, session, self.system)
        ids: list[str] = []
        for parts in stmt.names:
            item = resolver.item(parts)
            if item is None:
                if stmt.if_exists:
                    session.notice(f'{stmt.kind} "{".".join(parts)}" does not exist, skipping')
                    continue
                raise SqlError(UNDEFINED_TABLE if kind != "index" else "42704", f'unknown catalog item \'{".".join(parts)}\'')
            if item.kind != kind:
                raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is a {item.kind_word} not a {stmt.kind}")
            deps = self.catalog.dependents(item.id)
            # an object's own indexes go with it (as in Postgres and Materialize)
            blocking = [d for d in deps if not (d.kind == "index" and d.on_id == item.id)]
            if blocking and not stmt.cascade:
                raise SqlError("2BP01", f"cannot drop {item.qualified_name}: still depended upon by {blocking[0].kind_word} {blocking[0].qualified_name}",
                               hint="Use DROP ... CASCADE to drop the dependent objects too.")
            ids.extend(d.id for d in deps)
            ids.append(item.id)
        if ids:
            shards = [i.shard_id for i in (self.catalog.get_item_by_id(x) for x in ids) if i is not None and i.shard_id]
            with self.write_lock:
                self.catalog.drop_items(list(dict.fromkeys(ids)))
            self.compute.drop_cached(shards)
        tag = {"table": "DROP TABLE", "view": "DROP VIEW", "materialized-view": "DROP MATERIALIZED VIEW", "index": "DROP INDEX", "source": "DROP SOURCE"}[kind]
        return CommandResult(tag)

    def _show(self, session: Session, s: st.ShowObjects) -> list[tuple]:
        if s.what == "tables":
            schema = s.schema or (session.search_path() or ["public"])[0]
            if not self.catalog.schema_exists(schema):
                raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
            return sorted((i.name, None) for i in self.catalog.items("table") if i.schema == schema)
        if s.what == "schemas":
            return sorted((n, None) for _, n in self.catalog.schemas())
        if s.what == "databases":
            return [("materialize", None)]
        if s.what == "columns":
            item = _Resolver(self.catalog, session, self.system).item(s.target)
            if item is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(s.target)}'")
            return [(c.name, c.nullable, c.type.pg_format(), None) for c in item.columns]
        raise unsupported(f"SHOW {s.what.upper()}")

    # ---- COPY -----------------------------------------------------------------------
    def _copy_from(self, session: Session, s: st.CopyFrom) -> Result:
        item = _Resolver(self.catalog, session, self.system).item(s.table)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(s.table)}" does not exist')
        if item.kind != "table":
            raise SqlError(WRONG_OBJECT_TYPE, f"cannot copy to {item.kind_word} {item.qualified_name}")
        names = [c.name for c in item.columns]
        cols = list(s.columns) or names
        for c in cols:
            if c not in names:
                raise SqlError(UNDEFINED_COLUMN, f'column "{c}" of relation "{item.name}" does not exist')
        fmt = s.options.get("format", "text").lower()
        if fmt not in ("text", "csv"):
            raise unsupported(f"COPY FROM with format {fmt}")
        csv = fmt == "csv"
        descs = tuple(ColumnDesc(c, item.columns[names.index(c)].type) for c in cols)

        def write(table: pa.Table) -> str:
            n = table.num_rows
            full = pa.Table.from_arrays(
                [table.column(cols.index(c.name)) if c.name in cols else pa.nulls(n, arrow_type(c.type))
                 for c in item.columns],
                names=[column_name(i) for i in range(len(item.columns))])
            for i, c in enumerate(item.columns):
                if not c.nullable and full.column(i).null_count:
                    raise _not_null_error(item, c.name)
            if session.txn is not None:
                rows = arrow_to_rows(full, [c.type for c in item.columns])
                session.txn.kind = "write"
                session.txn.writes.append((item, rows, [1] * len(rows)))
            elif n:
                with self.write_lock:
                    self._commit(session, [(item, full, [1] * n)])
            return f"COPY {n}"

        return CopyInResult(
            descs, write, csv=csv,
            delimiter=s.options.get("delimiter", "," if csv else "\t"),
            null=s.options.get("null", "" if csv else "\\N"),
            header=s.options.get("header", "false").lower() in ("true", "on", "1"),
        )


def _not_null_error(item: Item, column: str) -> SqlError:
    return SqlError(NOT_NULL_VIOLATION, f'null value in column "{column}" of relation "{item.name}" violates not-null constraint')


def _batch_table(item: Item, rows: list[tuple] | pa.Table, diffs: list[int], ts: int) -> pa.Table:
    """A shard batch `c0..cN, time, diff` of Python rows or of a table of the data columns."""
    types = [c.type for c in item.columns]
    if not isinstance(rows, pa.Table):
        return rows_to_arrow(types, rows, ts, diffs)
    n = rows.num_rows
    arrays = [*rows.columns, pa.array(np.full(n, ts, dtype=np.int64)), pa.array(np.asarray(diffs, dtype=np.int64))]
    return pa.Table.from_arrays(arrays, schema=batch_schema(types))


def _sort_key(orders):
    """Python ordering of rows for a finishing (used for constant results only)."""
    from functools import cmp_to_key

    def cmp(a, b):
        for o in orders:
            x, y = a[0][o.column], b[0][o.column]
            if x is None or y is None:
                if x is None and y is None:
                    continue
                return (1 if x is None else -1) * (1 if o.nulls_last else -1)
            x, y = _pg_order_value(x), _pg_order_value(y)
            if x != y:
                r = -1 if x < y else 1
                return -r if o.desc else r
        return 0

    return cmp_to_key(cmp)


def _pg_order_value(v):
    """A Python value ordering as Postgres orders `v`: an array element by element, a NULL
    element after every value, then the shorter array first."""
    if isinstance(v, list):
        return [(1, 0) if x is None else (0, _pg_order_value(x)) for x in v]
    return v


def _cancel_error(session: Session) -> SqlError | None:
    """The error of a statement cancelled by its timeout or by the client, if it was."""
    if session.cancel_reason == "timeout":
        return SqlError(QUERY_CANCELED, "canceling statement due to statement timeout")
    if session.cancel_reason == "cancel":
        return SqlError(QUERY_CANCELED, "canceling statement due to user request")
    return None


def _finish_python(rows, f, already_sorted: bool = False) -> list[tuple]:
    """Apply a finishing (order, offset, limit, projection) to (row, diff) pairs."""
    items = list(rows)
    if f.order_by and not already_sorted:
        items.sort(key=_sort_key(f.order_by))
    out: list[tuple] = []
    skip = f.offset
    limit = f.limit
    for row, d in items:
        if d < 0:
            raise SqlError(INTERNAL_ERROR, "Invalid data in source, saw negative accumulation")
        for _ in range(d):
            if skip:
                skip -= 1
                continue
            if limit is not None and len(out) >= limit:
                return out
            out.append(tuple(row[i] for i in f.project))
    return out


def _batched(rows: list[tuple]) -> Iterator[list[tuple]]:
    for i in range(0, len(rows), BATCH_ROWS):
        yield rows[i : i + BATCH_ROWS]

