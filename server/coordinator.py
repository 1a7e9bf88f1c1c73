"""The coordinator: sequences statements of all sessions against the catalog, the
timestamp oracle, and the compute layer (DESIGN §2)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from catalog.catalog import Catalog
from catalog.oracle import TimestampOracle
from server.admission import DEFAULT_CONCURRENT_QUERIES, DEFAULT_QUEUED_QUERIES, Admission
from server.alter import AlterMixin
from server.api import ColumnDesc, CommandResult, CopyOutResult, Prepared, Result, RowsResult
from server.compute import Compute
from server.ddl import DdlMixin
from server.explain_timestamp import explain_timestamp
from server.group_commit import GroupCommitter, WriteLock
from server.plan_cache import PlanCache
from server.queries import QueriesMixin
from server.resolver import Resolver
from server.session import SESSION_VARS, Session, Transaction, parse_offset_ms
from server.show import SHOW_CREATE_COLUMNS, ShowMixin
from server.sources import SourcesMixin
from server.subscribe import SubscribeMixin, SubscribeRows
from server.system import SystemHandler
from server.temp import is_temp_name, temp_schema
from server.writes import WritesMixin
from sql import statements as st
from sql.bind import Binder, BoundQuery
from sql.errors import FEATURE_NOT_SUPPORTED, IN_FAILED_SQL_TRANSACTION, SqlError, unsupported
from sql.lex import split_statements
from sql.types import TEXT, SqlType

log = logging.getLogger("mzspark.coordinator")


@dataclass
class _Planned:
    """What Parse produced: the classified statement plus, for queries, the bound HIR."""

    stmt: st.Statement
    bound: BoundQuery | None = None
    param_types: tuple[SqlType, ...] = ()
    extra: Any = None
    catalog_version: int = -1  # plans bound against another catalog version are re-planned
    reads_user_objects: bool = False  # runs on the session's cluster (which must exist)


class Coordinator(QueriesMixin, DdlMixin, AlterMixin, WritesMixin, ShowMixin, SubscribeMixin, SourcesMixin):
    def __init__(self, data_dir: str, spark_master: str = "local[2]", workers: int | None = None,
                 spark_conf: dict[str, str] | None = None, password: str | None = None,
                 max_concurrent_queries: int = DEFAULT_CONCURRENT_QUERIES,
                 max_queued_queries: int = DEFAULT_QUEUED_QUERIES) -> None:
        self.catalog = Catalog(data_dir)
        self.admission = Admission(max_concurrent_queries, max_queued_queries)
        self.oracle = TimestampOracle(self.catalog)
        self.password = password
        self.write_lock = WriteLock()
        self.compute = Compute(spark_master, workers, spark_conf or {})
        self._sessions: dict[int, Session] = {}
        self._txn_hold_lock = threading.Lock()  # transactions' read timestamps (txn_read_holds)
        self._compacting: set[str] = set()
        self.plans = PlanCache()
        self.group_commit = GroupCommitter(self.write_lock, self._stage_batches, self._record_batches, self._check_written)
        self._closed = False
        self.system = SystemHandler(self)
        self.controller: Any = None  # compute.controller.Controller, once compute runs
        # system variable defaults from server flags (ALTER SYSTEM SET overrides them)
        self.flag_defaults: dict[str, str] = {}
        self.generators: Any = None  # server.load_generator.LoadGenerators, once compute runs

    def start_controller(self) -> None:
        """Start Spark and the compute controller: every index and materialized view is
        installed (rehydrated) before this returns."""
        from compute.controller import Controller

        self.spark()
        self.controller = Controller(self.catalog, self.oracle, self.compute, self._maintained_dataflow,
                                     tick=self._fresh_read_ts, expiration_offset=self._expiration_offset_ms,
                                     txn_holds=self.txn_read_holds)
        self.compute.on_restart(self.controller.driver_restarted)
        self.controller.start()
        from server.load_generator import LoadGenerators

        self.generators = LoadGenerators(self)
        self.generators.start()

    def set_flag_default(self, name: str, value: str) -> None:
        """A server flag's value of a system variable (validated like ALTER SYSTEM SET)."""
        scratch = Session("mz_system", "materialize", {})
        scratch.set(name, value, system=True)
        self.flag_defaults[name.lower()] = scratch.vars[name.lower()]

    def _system_defaults(self) -> dict[str, str]:
        return {**self.flag_defaults, **self.catalog.get_system_vars()}

    def _expiration_offset_ms(self) -> int:
        key = "compute_replica_expiration_offset"
        return parse_offset_ms(key, self._system_defaults().get(key, "0"))

    # ---- lifecycle ------------------------------------------------------------------
    def spark(self):
        """The SparkSession (started, or restarted after a loss, on demand: server.compute)."""
        return self.compute.spark()

    def _indexed_view(self, item_id: str) -> bool:
        """Is `item_id` a view read through its index (rather than inlined)?"""
        return self.controller is not None and bool(self.controller.indexes_on(item_id))

    def close(self) -> None:
        self._closed = True
        if self.generators is not None:
            self.generators.close()
        if self.controller is not None:
            self.controller.close()
        self.compute.close()
        self.catalog.close()

    # ---- server.api.Coordinator -----------------------------------------------------
    def new_session(self, user: str, database: str, options: dict[str, str]) -> Session:
        s = Session(user, database, options, self._system_defaults())
        self._sessions[s.pid] = s
        return s

    def end_session(self, session: Session) -> None:
        self.cancel(session)
        self.system._close_all(session)  # cursors (and their subscriptions) end with the session
        self._sessions.pop(session.pid, None)
        self._drop_temp_items(session)

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
        self._close_txn_cursors(session)
        if ok and not txn.failed:
            self._commit_buffered(session, txn)

    def _close_txn_cursors(self, session: Session) -> None:
        """Cursors (WITHOUT HOLD) end with their transaction: a subscribe cursor's dataflow
        is torn down at COMMIT / ROLLBACK, not at the session's next use of a cursor."""
        cursors = getattr(session, "cursors", {})
        for name, c in list(cursors.items()):
            if not c.hold and c.txn is not session.txn:
                cursors.pop(name, None)
                c.close()

    def cursor_stream(self, session: Session, prepared: Prepared) -> SubscribeRows | None:
        """DECLARE ... CURSOR FOR SUBSCRIBE: the subscription the cursor reads (None when
        the statement is no SUBSCRIBE)."""
        planned = prepared.plan
        if not isinstance(planned, _Planned) or not isinstance(planned.stmt, st.Subscribe):
            return None
        if session.txn is None or session.txn.implicit:
            raise SqlError("25P01", "DECLARE CURSOR FOR SUBSCRIBE can only be used in transaction blocks")
        if planned.catalog_version != self.catalog.version:
            planned = self._replan(session, prepared)
        assert isinstance(planned.stmt, st.Subscribe)
        return self._subscribe(session, planned.stmt, statement=False)

    def split_statements(self, sql: str) -> list[str]:
        return split_statements(sql)

    def client_terminated(self, session: Session) -> None:
        """The client sent Terminate while a statement runs: its live SUBSCRIBE ends now
        (other statements finish; the session ends after them)."""
        self._cancel_subscribes(session, "cancel")

    def cancel(self, session: Session, reason: str = "cancel") -> None:
        self._cancel_subscribes(session, reason)
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

    def prepare_cached(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared | None:
        """`prepare` when the plan is cached (a dictionary lookup: callers may run it on the
        event loop), else None. A cached plan is a query or a write that the system handler
        did not take at this catalog version: it would not take it now either."""
        key = self._plan_key(session, sql, param_types)
        hit = self.plans.get(key) if key is not None else None
        return None if hit is None else Prepared(sql, hit.param_types, hit.columns, hit.plan)

    def _prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared:
        key = self._plan_key(session, sql, param_types)
        if key is not None and (hit := self.plans.get(key)) is not None:
            return Prepared(sql, hit.param_types, hit.columns, hit.plan)
        system = self.system.prepare(session, sql, param_types)
        if system is not None:
            return system
        stmt = st.classify(sql)
        if isinstance(stmt, st.ShowListing):  # a catalog query (server/show.py)
            return self._prepare_listing(session, sql, stmt)
        planned = _Planned(stmt, catalog_version=self.catalog.version)
        columns: tuple[ColumnDesc, ...] | None = None
        resolver: Resolver | None = None  # the plan's resolver, for a cacheable plan
        match stmt:
            case st.Query(ast=ast) | st.CopyTo(query=ast):
                resolver = Resolver(self.catalog, session, self.system, indexed=self._indexed_view)
                b = Binder(resolver, param_types)
                if isinstance(stmt, st.Query):
                    b.unary_plus = stmt.unary_plus
                bound = b.bind_query(ast)
                planned.bound = bound
                planned.reads_user_objects = bool(b.dependencies)
                planned.param_types = b.param_types()
                if isinstance(stmt, st.Query):
                    columns = self._columns(bound)
            case st.Insert() | st.Update() | st.Delete():
                resolver = Resolver(self.catalog, session, self.system)
                b = Binder(resolver, param_types)
                planned.extra = self._plan_write(b, stmt, session)
                planned.param_types = b.param_types()
                if planned.extra[0].temporary:
                    resolver.volatile = True
            case st.ExplainAnalyzeObject():
                from server import explain_analyze

                columns = explain_analyze.columns(stmt)
            case st.Explain(target=target):
                if isinstance(target, st.Query):
                    b = Binder(Resolver(self.catalog, session, self.system, indexed=self._indexed_view), param_types)
                    b.unary_plus = target.unary_plus
                    planned.bound = b.bind_query(target.ast)
                    planned.param_types = b.param_types()
                if stmt.stage == "filter_pushdown":
                    from server import explain_pushdown

                    columns = explain_pushdown.COLUMNS
                else:
                    name = {"raw": "Raw Plan", "decorrelated": "Decorrelated Plan", "optimized": "Optimized Plan",
                            "physical": "Physical Plan", "timestamp": "Timestamp"}[stmt.stage]
                    columns = (ColumnDesc(name, TEXT),)
            case st.ShowVar(name=name):
                if name == "all":
                    columns = (ColumnDesc("name", TEXT), ColumnDesc("setting", TEXT), ColumnDesc("description", TEXT))
                else:
                    self._show_value(session, name)
                    columns = (ColumnDesc(name, TEXT),)
            case st.ShowCreate():
                columns = SHOW_CREATE_COLUMNS
            case st.Subscribe():
                columns = self._subscribe_columns(session, stmt)
                planned.reads_user_objects = True
            case st.CopySubscribe():
                self._subscribe_columns(session, stmt.subscribe)  # unknown objects fail at Parse
                planned.reads_user_objects = True
            case _:
                pass
        prepared = Prepared(sql, tuple(planned.param_types), columns, planned)
        if key is not None and resolver is not None and not resolver.volatile and key[2] == planned.catalog_version:
            self.plans.put(key, prepared)
        return prepared

    def _plan_key(self, session: Session, sql: str, param_types: list[SqlType | None]) -> tuple | None:
        """What a plan of `sql` is bound from (server.plan_cache); None: not cacheable."""
        if self.catalog.schema_exists(temp_schema(session.pid)):
            return None
        v = session.vars
        key = (sql, tuple(param_types), self.catalog.version, session.user, session.database,
               v["search_path"], v["intervalstyle"])
        try:
            hash(key)
        except TypeError:  # a parameter type that cannot be a key
            return None
        return key

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

    def _show_value(self, session: Session, name: str) -> str:
        """A session variable, else a read-only Postgres setting clients ask for
        (`max_identifier_length`, `lc_collate`, ...: server/system.py), else 42704."""
        try:
            return session.get(name)
        except SqlError:
            value = self.system.setting(session, name)
            if value is None:
                raise
            return str(value)

    def _alter_system(self, session: Session, s: st.AlterSystem) -> Result:
        """ALTER SYSTEM SET / RESET: the persisted default of a variable, for new sessions and
        for live ones that have not set it themselves (superusers only, outside a transaction)."""
        if session.get("is_superuser") != "on":
            raise SqlError("42501", "permission denied to alter system",
                           detail="You must be a superuser to alter system variables.")
        if session.txn is not None and not session.txn.implicit:
            raise SqlError("25001", "ALTER SYSTEM cannot be run inside a transaction block")
        names = [s.name] if s.name is not None else list(self.catalog.get_system_vars())
        for name in names:
            scratch = Session("mz_system", "materialize", {})  # validates and normalizes the value
            scratch.set(name, s.value, system=True)
            key = name.lower()
            self.catalog.set_system_var(key, s.value if s.value is None else scratch.vars[key])
            value = scratch.vars[key] if s.value is not None else self.flag_defaults.get(key, SESSION_VARS[key][0])
            for live in list(self._sessions.values()):
                live.system_default_changed(key, value)
        return CommandResult("ALTER SYSTEM")

    # ---- dispatch -------------------------------------------------------------------
    def _execute(self, session: Session, planned: _Planned, params: list[Any], prepared: Prepared) -> Result:
        stmt = planned.stmt
        if planned.reads_user_objects:  # SET cluster = 'nope' is accepted; using it is not
            self._check_cluster(session.get("cluster"))
        match stmt:
            case st.Empty():
                return CommandResult("EMPTY")
            case st.Query():
                assert planned.bound is not None
                if stmt.as_of is not None:
                    ts = self._as_of_ts(session, planned.bound, stmt.as_of, stmt.as_of_at_least)
                    return self._select(session, planned.bound, params, planned.param_types, ts=ts)
                return self._select(session, planned.bound, params, planned.param_types)
            case st.Explain() if stmt.stage == "filter_pushdown":
                return RowsResult(prepared.columns or (), iter([self._explain_pushdown(session, stmt, planned.bound, params,
                                                                                       planned.param_types)]))
            case st.Explain(target=st.Query()) if stmt.stage == "timestamp":
                assert planned.bound is not None
                q = stmt.target
                assert isinstance(q, st.Query)
                at = self._as_of_determination(session, planned.bound, q.as_of, q.as_of_at_least) if q.as_of is not None else None
                text = explain_timestamp(self, session, planned.bound, params, planned.param_types, stmt.format, at)
                return RowsResult(prepared.columns or (), iter([[(text,)]]))
            case st.ExplainAnalyzeObject():
                from server import explain_analyze

                return RowsResult(prepared.columns or (), iter([explain_analyze.rows(self, session, stmt)]))
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
            case st.CreateSource():
                return self._create_source(session, stmt)
            case st.Subscribe():
                return self._subscribe_result(session, stmt)
            case st.CopySubscribe():
                return self._copy_subscribe(session, stmt)
            case st.Insert() | st.Update() | st.Delete():
                return self._write(session, stmt, planned.extra, params, planned.param_types)
            case st.CreateTable():
                return self._create_table(session, stmt)
            case st.DropObjects():
                return self._drop(session, stmt)
            case st.CommentOn():
                return self._comment_on(session, stmt)
            case st.AlterRename():
                return self._alter_rename(session, stmt)
            case st.CreateSchema(name=name) if is_temp_name(name):
                raise SqlError("42939", f"unacceptable schema name '{name}'")
            case st.DropSchema(names=names) if any(is_temp_name(n) for n in names):
                raise SqlError("42939", f"unacceptable schema name '{next(n for n in names if is_temp_name(n))}'")
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
                    self._dropped_maintained()
                return CommandResult("DROP SCHEMA")
            case st.SetVar(name=name, value=value):
                session.set(name, value)
                return CommandResult("SET")
            case st.ResetVar(name=name):
                if name is None:
                    session.reset_all()
                else:
                    session.set(name, None)
                return CommandResult("RESET")
            case st.ShowVar(name=name):
                if name == "all":
                    rows = [(k, v, "") for k, v in sorted(session.vars.items())]
                    return RowsResult(prepared.columns or (), iter([rows]))
                return RowsResult(prepared.columns or (), iter([[(self._show_value(session, name),)]]), tag=lambda n: "SHOW")
            case st.ShowCreate():
                return RowsResult(prepared.columns or (), iter([self._show_create(session, stmt)]))
            case st.AlterSystem():
                return self._alter_system(session, stmt)
            case st.TxnControl():
                result = self._txn_control(session, stmt)
                self._close_txn_cursors(session)
                return result
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
