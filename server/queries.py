"""One-shot queries for the coordinator: SELECT / COPY TO rendering on Spark, EXPLAIN, SHOW."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from catalog.catalog import Catalog, Item
from catalog.oracle import TimestampOracle
from catalog.storage.parts import int_ranges
from compute.plan import lir, pipeline
from compute.plan.flags import PlanFlags
from compute.plan.lookup import filtered_source, find_lookup
from compute.plan.non_negative import non_negative
from server.api import ColumnDesc, RowsResult
from server.compute import Compute
from server.resolver import Resolver
from server.session import Session
from sql import statements as st
from sql.bind import Binder, BoundQuery
from sql.errors import (
    INTERNAL_ERROR,
    INVALID_TRANSACTION_STATE,
    OUT_OF_MEMORY,
    QUERY_CANCELED,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
    before_since,
    unsupported,
)
from sql.mir import Constant, Mir
from sql.statements_stream import Subscribe
from sql.temporal import check_maintainable
from sql.types import SqlType

BATCH_ROWS = 4096


class QueriesMixin:
    """The Coordinator's one-shot reads (mixed into server.coordinator.Coordinator)."""

    catalog: Catalog
    oracle: TimestampOracle
    compute: Compute
    system: Any
    _fresh_read_ts: Any  # server.writes.WritesMixin
    _txn_hold_lock: Any  # threading.Lock (server.coordinator)
    _sessions: Any
    _timestamp: Any  # server.subscribe.SubscribeMixin (AS OF expressions)
    _monotonic_sources: Any  # server.sources.SourcesMixin
    _subscribe_plan: Any  # server.subscribe.SubscribeMixin
    admission: Any  # server.admission.Admission (server.coordinator)
    controller: Any

    def _columns(self, b: BoundQuery) -> tuple[ColumnDesc, ...]:
        origins = b.origins or tuple((0, 0) for _ in b.types)
        return tuple(ColumnDesc(n, t, o[0], o[1]) for n, t, o in zip(b.names, b.types, origins, strict=True))

    @staticmethod
    def _flags(session: Session) -> PlanFlags:
        return PlanFlags(
            enable_monotonic_oneshot_selects=session.flag("enable_monotonic_oneshot_selects"),
            enable_consolidate_after_union_negate=session.flag("enable_consolidate_after_union_negate"),
            broadcast_join_threshold_rows=int(session.get("broadcast_join_threshold_rows")),
        )

    def _explain(self, session: Session, e: st.Explain, bound: BoundQuery, params, param_types) -> str:
        return pipeline.explain(e.stage, bound, e.options, self._flags(session), params, param_types, e.format,
                                sizes=lambda m: self._sizes(m, self._read_ts(session)), names=self._column_names,
                                ranges=lambda m: self._ranges(m, self._read_ts(session)),
                                indexed=self.controller.indexed() if self.controller is not None else None,
                                lookups=self.controller.index_keys() if self.controller is not None else None,
                                monotonic=self._monotonic_sources())

    def _column_names(self, m: Mir) -> dict[str, tuple[str, ...]]:
        """Column names of the storage collections `m` reads (EXPLAIN's humanized expressions)."""
        items = (self.catalog.get_item_by_id(i) for i in pipeline.storage_ids(m))
        return {it.id: tuple(c.name for c in it.columns) for it in items if it is not None}

    def _sizes(self, m: Mir, ts: int) -> dict[str, int]:
        """Rows of the storage collections `m` reads, at `ts` (from the catalog's batch
        metadata; no data is read): the join planner's sizes."""
        out: dict[str, int] = {}
        for i in pipeline.storage_ids(m):
            item = self.catalog.get_item_by_id(i)
            if item is not None and item.shard_id is not None and item.kind in ("table", "source"):
                out[i] = sum(b.rows for b in self.catalog.shard_batches(item.shard_id, ts))
        return out

    def _ranges(self, m: Mir, ts: int) -> dict[str, dict[int, tuple[int, int]]]:
        """(min, max) of the integer columns of the storage collections `m` reads, at `ts`,
        from their batch files' statistics (footers only, cached by file): the join
        planner's bound on a key's distinct values."""
        out: dict[str, dict[int, tuple[int, int]]] = {}
        for i in pipeline.storage_ids(m):
            item = self.catalog.get_item_by_id(i)
            if item is None or item.shard_id is None or item.kind not in ("table", "source"):
                continue
            acc: dict[int, tuple[int, int]] | None = None
            for b in self.catalog.shard_batches(item.shard_id, ts):
                if b.rows == 0:
                    continue
                try:
                    r = int_ranges(b.path)
                except OSError:  # compacted away meanwhile: no bounds for this collection
                    acc = {}
                    break
                acc = dict(r) if acc is None else {c: (min(lo, r[c][0]), max(hi, r[c][1])) for c, (lo, hi) in acc.items() if c in r}
            if acc:
                out[i] = acc
        return out

    def _explain_analyze(self, session: Session, bound: BoundQuery, params, param_types) -> str:
        """Run the one-shot dataflow and annotate its physical plan with the records each
        node produced."""
        ts = self._read_ts(session)
        m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: self._sizes(m, ts), ranges=lambda m: self._ranges(m, ts),
                                   monotonic=self._monotonic_sources())
        df = pipeline.dataflow(m, bound.finishing, flags=self._flags(session), sizes=self._sizes(m, ts))
        counts: dict[int, int] = {}
        self._run(session, df, ts, bound, record_counts=counts)
        return pipeline.explain_dataflow_text(df, node_ids=True, records=counts)

    def _explain_pushdown(self, session: Session, e: st.Explain, bound: BoundQuery | None, params: list[Any],
                          param_types: tuple[SqlType, ...]) -> list[tuple[Any, ...]]:
        """EXPLAIN FILTER PUSHDOWN FOR <select> | MATERIALIZED VIEW <mv> (server.explain_pushdown)."""
        from server import explain_pushdown

        if bound is not None:
            return explain_pushdown.for_select(self, session, bound, params, param_types)
        target = e.target
        assert isinstance(target, st.ExplainObject)
        resolver = Resolver(self.catalog, session, self.system)
        item = resolver.item(target.name)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(target.name)}'")
        if item.kind != "materialized-view":
            raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is not a materialized view")
        create = st.classify(item.create_sql)
        assert isinstance(create, st.CreateView)
        b = Binder(resolver)
        rel = b._finish_nested(b.bind_query(create.query, top=False))
        return explain_pushdown.for_materialized_view(self, pipeline.to_mir_rel(rel))

    def _explain_object(self, session: Session, e: st.Explain) -> str:
        """EXPLAIN for CREATE MATERIALIZED VIEW / CREATE INDEX / VIEW / MATERIALIZED VIEW / INDEX:
        the maintained plan (not single-time), headed by the object's name."""
        resolver = Resolver(self.catalog, session, self.system)
        target = e.target
        if isinstance(target, Subscribe):  # the subscription's dataflow, as SUBSCRIBE installs it
            if e.stage == "filter_pushdown":
                raise unsupported("EXPLAIN FILTER PUSHDOWN FOR SUBSCRIBE")
            m, _names, _types, _name = self._subscribe_plan(session, target)
            check_maintainable(m)
            return self._explain_maintained(e, m, "Explained Query")
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
                m = pipeline.to_mir_rel(rel) if e.stage in ("raw", "decorrelated") else pipeline.optimize(pipeline.to_mir_rel(rel), monotonic_sources=self._monotonic_sources())
                if e.format == "json":
                    return pipeline.explain_mir_json(m, e.stage, f"materialize.{schema}.{name}")
                return pipeline.explain_mir_text(m, e.options, names=self._column_names(m),
                                                 sizes=self._sizes(m, self._fresh_read_ts()))
            m = pipeline.to_mir_rel(rel)
            return self._explain_maintained(e, m, f"materialize.{schema}.{name}")
        assert isinstance(target, st.CreateIndex)
        on, keys, _ = self._index_parts(resolver, target)
        name = target.name or self._index_name(on, target)
        m = pipeline.arrange_by(self._object_mir(resolver, on), keys)
        return self._explain_maintained(e, m, f"materialize.{on.schema}.{name}")

    def _explain_maintained(self, e: st.Explain, m, header: str) -> str:
        if e.stage != "raw" and e.stage != "decorrelated":
            m = pipeline.optimize(m, monotonic_sources=self._monotonic_sources())
        if e.stage != "physical":
            if e.format == "json":
                return pipeline.explain_mir_json(m, e.stage, header)
            return pipeline.explain_mir_text(m, e.options, names=self._column_names(m),
                                             sizes=self._sizes(m, self._fresh_read_ts()))
        df = pipeline.dataflow(m, None, name=header, single_time=False)
        return pipeline.explain_lir_json(df) if e.format == "json" else pipeline.explain_lir_text(df, e.options)

    def _object_mir(self, resolver: Resolver, item: Item):
        """MIR reading an indexed object: a view's definition, or its storage."""
        if item.kind == "view":
            return pipeline.to_mir_rel(resolver.view_hir(item))
        return pipeline.get_storage(item.id, item.qualified_name, tuple(c.type for c in item.columns))

    def txn_read_holds(self) -> list[int]:
        """The read timestamps of open transactions: compaction keeps every shard readable at
        them (a transaction's reads all see its first read's snapshot)."""
        with self._txn_hold_lock:
            return [s.txn.read_ts for s in list(self._sessions.values())
                    if s.txn is not None and s.txn.read_ts is not None and not s.txn.implicit]

    def _read_ts(self, session: Session) -> int:
        txn = session.txn
        if txn is not None and txn.implicit:
            # A read after writes in one simple query: the writes commit first so the read
            # sees them (Postgres' read-your-writes; atomicity then ends at the read).
            self._commit_buffered(session, txn)
            return self._fresh_read_ts()
        if txn is not None:
            if txn.kind == "write":
                raise SqlError(INVALID_TRANSACTION_STATE, "transaction in write-only mode")
            txn.kind = "read"
            if txn.read_ts is None:
                # under the lock the read holds are computed with: a compaction either sees
                # this hold or began before this timestamp was taken (its since is at most it)
                with self._txn_hold_lock:
                    txn.read_ts = self._fresh_read_ts()
            return txn.read_ts
        return self._fresh_read_ts()

    def _as_of_determination(self, session: Session, bound: BoundQuery, expr: str, at_least: bool) -> int:
        """The timestamp AS OF [AT LEAST] expr reads at (EXPLAIN TIMESTAMP shows it), checked
        against every storage input's since (22000 below it)."""
        if session.txn is not None and not session.txn.implicit:
            raise unsupported("SELECT ... AS OF in a transaction")
        want = self._timestamp(session, expr, self.oracle.read_ts(), "AS OF")
        since = max((self.catalog.shard_since(i.shard_id) for i in self._storage_inputs(bound) if i.shard_id is not None), default=0)
        if at_least:
            want = max(want, since, self._fresh_read_ts())
        if want < since:
            raise before_since(want, since)
        return want

    def _as_of_ts(self, session: Session, bound: BoundQuery, expr: str, at_least: bool) -> int:
        """The read timestamp of SELECT ... AS OF [AT LEAST] expr: at or after the since of
        every storage input (else 22000); one not yet complete is waited for (strict
        serializable: no write may land at or below it afterwards). AT LEAST: the usual
        timestamp when it is later."""
        want = self._as_of_determination(session, bound, expr, at_least)
        timeout_ms = session.statement_timeout_ms()
        deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms > 0 else None
        session.cancel_reason = None
        while self._fresh_read_ts() < want:  # a future timestamp: wait for the clock
            if (e := _cancel_error(session)) is not None:
                raise e
            if deadline is not None and time.monotonic() > deadline:
                raise SqlError(QUERY_CANCELED, "canceling statement due to statement timeout")
            time.sleep(min(0.05, max(0.001, (want - self.oracle.now_ms()) / 1000)))
        return want

    def _storage_inputs(self, bound: BoundQuery) -> list[Item]:
        """The tables, sources and materialized views a query reads, through views."""
        seen: dict[str, Item] = {}
        todo = list(pipeline.storage_ids(pipeline.to_mir_rel(bound.rel)))
        while todo:
            item = self.catalog.get_item_by_id(todo.pop())
            if item is None or item.id in seen:
                continue
            seen[item.id] = item
            if item.shard_id is None:
                todo.extend(item.depends_on)
        return [i for i in seen.values() if i.shard_id is not None]

    def _select(self, session: Session, bound: BoundQuery, params, param_types, ts: int | None = None) -> RowsResult:
        if ts is None:
            ts = self._read_ts(session)  # also enforces the transaction's read/write mode
        m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: self._sizes(m, ts), ranges=lambda m: self._ranges(m, ts),
                                   monotonic=self._monotonic_sources())
        columns = self._columns(bound)
        f = bound.finishing
        if isinstance(m, Constant):
            rows = _finish_python(m.rows, f)
            return RowsResult(columns, _batched(rows))
        df = pipeline.dataflow(m, f, flags=self._flags(session), sizes=self._sizes(m, ts))
        return RowsResult(columns, self._run_lazily(session, df, ts, bound))

    def _run_lazily(self, session: Session, df: lir.Dataflow, ts: int, bound: BoundQuery) -> Iterator[list[tuple]]:
        rows = self._run(session, df, ts, bound)
        yield from _batched(rows)

    def _run(self, session: Session, df: lir.Dataflow, ts: int, bound: BoundQuery | None,
             record_counts: dict[int, int] | None = None) -> list[tuple]:
        """Render a one-shot dataflow at `ts`, collect, apply the finishing. With
        `record_counts`, also count the records every plan node produced (EXPLAIN ANALYZE)."""
        from compute.render import oneshot, plan_log, templates
        from compute.render.errors import translate_spark_error
        from compute.render.spark import TINY_INPUT_ROWS, collect_arrow, session_for

        spark = self.spark()
        done: list[Any] = []
        rows_read = [0]
        # a point lookup by an index's key reads only those keys' rows (compute.plan.lookup)
        lookup = find_lookup(df, self.controller.index_keys()) if self.controller is not None and record_counts is None else None
        # a filter over one small table: read as a local relation, collected without a job
        local = filtered_source(df) if record_counts is None else None

        def read_source(item_id: str, types: tuple[SqlType, ...]) -> oneshot.Rel:
            item = self.catalog.get_item_by_id(item_id)
            if item is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown relation {item_id}")
            ctl = self.controller
            if ctl is not None:
                # strict serializable: a maintained object is read once complete at `ts`
                if item.kind == "materialized-view":
                    ctl.wait_until(item.id, ts, check_interrupt)
                keyed = (lookup.index_id, lookup.values) if lookup is not None and lookup.source == item.id else None
                got = ctl.index_state(item.id, ts, check_interrupt, lookup=keyed)
                if got is None and keyed is not None:  # that index is not ready: any other
                    got = ctl.index_state(item.id, ts, check_interrupt)
                    keyed = None
                if got is not None:
                    select, release = got
                    done.append(release)
                    if item.shard_id is not None and keyed is None:  # its size, for the choice of Spark session
                        rows_read[0] += sum(b.rows for b in self.catalog.shard_batches(item.shard_id, ts))
                    return oneshot.Rel(select, len(types))
            if item.kind == "view" or (item.kind == "materialized-view" and ctl is None):
                # an indexed view whose index has no state at `ts` (hydrating), or a
                # materialized view without a compute controller (embedded use): its definition
                hir = Resolver(self.catalog, session, self.system).view_hir(item)
                sub = pipeline.dataflow(pipeline.optimize(pipeline.to_mir_rel(hir, now=ts), monotonic_sources=self._monotonic_sources()), None, name=item.qualified_name, flags=self._flags(session))
                outer, ctx.source_mfps = ctx.source_mfps, dict(sub.source_mfps)
                try:
                    return oneshot.consolidate(oneshot.render(sub.plan, ctx), ctx)
                finally:
                    ctx.source_mfps = outer
            if item.shard_id is None:
                raise SqlError(UNDEFINED_TABLE, f"unknown relation {item_id}")
            shard = item.shard_id
            batches = self.catalog.shard_batches(shard, ts)
            rows_read[0] += sum(b.rows for b in batches)
            view, release = self.compute.sources().read(shard, batches, types, ts, lambda: self.catalog.lease_batches(shard, ts),
                                                         local=item_id == local)
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
            # queued here (FIFO, bounded) while the compute slots are taken: 53300 when full
            with self.admission.slot(check_interrupt):
                sc.setJobGroup(tag, f"session {session.pid}", interruptOnCancel=True)
                if fin is not None and fin.limit is not None and not fin.order_by and _recursion_under_rows_kept(df.plan.node):
                    ctx.row_goal = fin.offset + fin.limit
                out = oneshot.render(df.plan, ctx)
                if not non_negative(df.plan):
                    out = oneshot.consolidate(out, ctx)
                text = oneshot.finish(out, fin, ctx)
                sdf = templates.frame(ctx.session(), text)  # (a bound parameter's new value: no re-analysis)
                table = collect_arrow(sdf, small=ctx.tiny())  # (a local relation: no Spark job)
                if plan_log.enabled():
                    for k, inner in enumerate(ctx.inner_frames):
                        plan_log.log_plan(inner, f"(materialized {k})")
                    plan_log.log_plan(sdf, text[:2000], tag)
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


def _recursion_under_rows_kept(node: object) -> bool:
    """Is `node` a recursion, under maps and projections only (which keep every row), so a
    LIMIT above it may stop its iteration early (compute.render.letrec)?"""
    while isinstance(node, lir.MfpNode) and not node.mfp.predicates:
        node = node.input.node
    return isinstance(node, lir.LetRec)
