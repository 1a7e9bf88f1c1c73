"""Writes for the coordinator: INSERT / UPDATE / DELETE, COPY FROM, transactions, durable
commits and shard compaction."""

from __future__ import annotations

import logging
import threading
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
from catalog.storage.shard import BatchFile
from compute.plan import pipeline
from server.api import ColumnDesc, CommandResult, CopyInResult, Result
from server.compute import Compute
from server.group_commit import GroupCommitter, WriteLock, merge
from server.resolver import Resolver
from server.session import Session, Transaction
from sql import statements as st
from sql.bind import Binder, Scope, ScopeColumn
from sql.bind_cte import bind_with
from sql.bind_names import sql_type_of
from sql.errors import (
    ACTIVE_SQL_TRANSACTION,
    DUPLICATE_COLUMN,
    INVALID_TRANSACTION_STATE,
    NOT_NULL_VIOLATION,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
    unsupported,
)
from sql.hir import HConstant, HirRel, HMap, HProject
from sql.insert_defaults import INSERT_TOO_MANY, default_expression, expand_values, is_default
from sql.lowering import lower as lower_to_mir
from sql.mir import Constant
from sql.optimize import optimize
from sql.parse import parse_sql
from sql.scalar import Column as ColRef
from sql.scalar import Literal
from sql.types import SqlType

log = logging.getLogger("mzspark.coordinator")
COMPACT_AFTER_BATCHES = 32


TICK_MS = 1000  # how far the read timestamp may trail the wall clock


class WritesMixin:
    """The Coordinator's writes and transactions (mixed into server.coordinator.Coordinator)."""

    group_commit: GroupCommitter

    catalog: Catalog
    oracle: TimestampOracle
    compute: Compute
    system: Any
    write_lock: WriteLock
    _compacting: set[str]

    def _fresh_read_ts(self) -> int:
        """The read timestamp, first advanced to the wall clock when it trails it by more than
        a second (Materialize's once-a-second oracle tick, done lazily: without it `mz_now()`
        and `now()` stayed at the last write's time, 1970 on a new catalog). A tick takes the
        write lock, so no write is in flight below it; while a write holds it, the write's
        own timestamp advances time instead."""
        if self.oracle.now_ms() - self.oracle.read_ts() > TICK_MS and self.write_lock.acquire(blocking=False):
            try:
                self._tick_if_stale()
            finally:
                self.write_lock.release()
        return self.oracle.reader_ts()

    def _tick_if_stale(self) -> None:
        """Caller holds the write lock."""
        if self.oracle.now_ms() - self.oracle.read_ts() > TICK_MS:
            self.oracle.tick()

    def _target(self, session: Session, table: Any) -> Item:
        parts = [p.name for p in table.parts]
        item = Resolver(self.catalog, session, self.system).item(parts)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(parts)}" does not exist')
        if item.kind != "table":
            raise SqlError(WRONG_OBJECT_TYPE, f"cannot modify {item.kind_word} {item.qualified_name}")
        return item

    def _plan_write(self, b: Binder, stmt, session: Session) -> tuple[Item, HirRel, Any]:
        """Returns (table, HIR producing rows, extra): for INSERT the new rows; for UPDATE
        and DELETE the affected old rows followed by (UPDATE) the new values."""
        ast = stmt.ast
        # WITH c AS (...) INSERT / UPDATE / DELETE: the CTEs are in scope in the whole statement
        # (a data-modifying CTE is refused by bind_query with 0A000)
        bind_with(b, ast)
        if isinstance(stmt, st.Insert):
            target = ast.this
            cols_given = None
            explicit = target.__class__.__name__ == "Schema"  # (c1, .., cn) given
            if explicit:
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
            if src is None and ast.args.get("default"):
                # INSERT … DEFAULT VALUES: one row of the columns' defaults
                rel = HConstant(((),), ())
                bq_types: tuple[SqlType, ...] = ()
            else:
                target_types = [item.columns[names.index(c)].type for c in cols_given]
                if isinstance(src, exp.Values):
                    src = expand_values(src, [self._default_ast(item.columns[names.index(c)]) for c in cols_given])
                self._seed_value_params(b, src, target_types)
                if isinstance(src, exp.Values):  # (a VALUES inside a query is typed on its own)
                    b.values_hint = list(zip(target_types, cols_given, strict=False))
                try:
                    bq = b.bind_query(src, top=False)
                finally:
                    b.values_hint = None
                rel = b._finish_nested(bq)
                bq_types = bq.types
            if len(bq_types) > len(cols_given):
                raise SqlError(SYNTAX_ERROR, INSERT_TOO_MANY)
            if explicit and len(bq_types) < len(cols_given):
                raise SqlError(SYNTAX_ERROR, "INSERT has more target columns than expressions")
            cols_given = cols_given[: len(bq_types)]
            n_in = len(bq_types)
            exprs = []
            for col in item.columns:
                if col.name in cols_given:
                    k = cols_given.index(col.name)
                    exprs.append(b.assignment_cast(ColRef(k, bq_types[k]), col.type, col.name))
                else:
                    exprs.append(self._default(b, col))
            out = HProject(HMap(rel, tuple(exprs)), tuple(range(n_in, n_in + len(exprs))))
            return item, out, "insert"
        if isinstance(stmt, (st.Update, st.Delete)):
            item = self._target(session, ast.this)
            if ast.args.get("returning"):
                # refused before anything is written: ignoring it would return no rows
                raise unsupported("UPDATE/DELETE ... RETURNING")
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
                if isinstance(eq.this, exp.Bracket):
                    raise unsupported("UPDATE of a subscripted column (SET col[...] = ...)")
                col = eq.this.name
                idx = next((i for i, c in enumerate(item.columns) if c.name == col), None)
                if idx is None:
                    raise SqlError(UNDEFINED_COLUMN, f'column "{col}" of relation "{item.name}" does not exist')
                if is_default(eq.expression):
                    assigns[idx] = self._default(b, item.columns[idx])
                    continue
                h = b.scalar(eq.expression, scope)
                assigns[idx] = b.assignment_cast(h, item.columns[idx].type, col)
            new = tuple(assigns.get(i, ColRef(i, c.type)) for i, c in enumerate(item.columns))
            return item, HMap(rel, new), "update"  # old row ++ new row
        raise AssertionError(stmt)

    @staticmethod
    def _seed_value_params(b: Binder, src: Any, types: list[SqlType]) -> None:
        """`INSERT ... VALUES ($1, ...)`: a bare parameter takes its target column's type."""

        if not isinstance(src, exp.Values):
            return
        for tup in src.expressions:
            elems = tup.expressions if isinstance(tup, exp.Tuple) else [tup]
            for e, t in zip(elems, types, strict=False):
                if isinstance(e, exp.Parameter) or isinstance(e, exp.Placeholder):
                    n = int(e.this.this if isinstance(e.this, exp.Literal) else e.name)
                    b.params.setdefault(n, t)

    @staticmethod
    def _default_ast(col: Column):
        """A thunk of `col`'s default as an expression of its type (sql.insert_defaults)."""
        return lambda: default_expression(col.default_sql, col.type, st.parse_sql, sql_type_of)

    def _default(self, b: Binder, col: Column):
        if col.default_sql:
            e = parse_sql(f"SELECT {col.default_sql}").expressions[0]
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
                got = self._eval_rows(session, rel, params, param_types, self._fresh_read_ts())
            else:
                raise SqlError(INVALID_TRANSACTION_STATE, "INSERT with a query cannot be run inside a transaction block (transaction in write-only mode)")
            txn.kind = "write"
            rows = [r for r, d in got for _ in range(d)]
            self._check_not_null(item, rows)
            txn.writes.append((item, rows, [1] * len(rows)))
            return CommandResult(f"INSERT 0 {len(rows)}")
        if kind == "insert":
            m = optimize(lower_to_mir(rel, params, param_types, now=self._fresh_read_ts()))
            if isinstance(m, Constant):  # reads nothing: committed with the writes arriving with it
                rows = [r for r, d in m.rows for _ in range(d)]
                self._check_not_null(item, rows)
                self.group_commit.commit([(item, rows, [1] * len(rows))])
                return CommandResult(f"INSERT 0 {len(rows)}")
        with self.write_lock:
            self._tick_if_stale()  # now() / mz_now() of the statement: the wall clock's second
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

    def _commit(self, session: Session | None, writes: list[tuple[Item, list[tuple], list[int]]]) -> int:
        """Write batches durably and record them at one fresh timestamp. Caller holds
        the write lock."""
        return self._record_batches(self._stage_batches(writes))

    def _stage_batches(self, writes: list[tuple[Item, list[tuple], list[int]]]) -> tuple[int, list[tuple[str, BatchFile]]]:
        """(a fresh write timestamp, the batch files of `writes` at it, written durably but
        not yet recorded). Caller holds the write lock."""
        ts = self.oracle.write_ts()
        files: list[tuple[str, BatchFile]] = []
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
        return ts, files

    def _record_batches(self, staged: tuple[int, list[tuple[str, BatchFile]]]) -> int:
        """Record staged batch files at their timestamp in one durable catalog transaction
        (the read timestamp advances to it); the timestamp. Caller holds the write lock."""
        ts, files = staged
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
        self.group_commit.commit(merge(writes))

    def _check_written(self, writes: list[tuple[Item, list[tuple], list[int]]]) -> None:
        """Raise if a table of `writes` was dropped since they were planned."""
        for item, _, _ in writes:
            if self.catalog.get_item_by_id(item.id) is None:
                raise SqlError(UNDEFINED_TABLE, f'table "{item.qualified_name}" was dropped')

    def _copy_from(self, session: Session, s: st.CopyFrom) -> Result:
        item = Resolver(self.catalog, session, self.system).item(s.table)
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
