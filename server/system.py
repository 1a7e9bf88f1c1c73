"""Catalog-only queries and utility statements (DESIGN §2 step 2, §8): answered from the
DuckDB catalog without any Spark job.

`SystemHandler.prepare` is consulted first for every statement; it returns None for
statements that are not its business, which then take the normal planning path. It owns:
  * catalog-only queries (`system_sql`): rewritten onto `mzsys` and run by DuckDB;
  * the utility statements tools send: DECLARE/FETCH/MOVE/CLOSE cursors, DISCARD, UNLISTEN,
    SET SESSION CHARACTERISTICS / SET TRANSACTION, `COPY (<catalog query>) TO STDOUT`;
  * refusing DuckDB's own statements (ATTACH, INSTALL, LOAD, PRAGMA, ...) outright.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catalog.system import pg15_data
from catalog.system.relations import RELATIONS_BY_NAME, pg_type_of_duck
from server.api import ColumnDesc, CopyOutResult, Prepared, Result, RowsResult
from server.session import BOOL_VARS, READ_ONLY, REPORTED_NAMES, SERVER_VERSION_TEXT, SESSION_VARS
from server.system_sql import Rewriter, Rewritten, deps_hold
from server.system_sql_ast import SYSTEM_SCHEMAS, parse_pg
from server.system_sql_context import Context, NotCatalog, _system_relation, is_catalog_query
from server.system_sql_functions import _FUNCTIONS, RUNTIME_ERROR_TAG
from server.system_utility import UtilityMixin
from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    IN_FAILED_SQL_TRANSACTION,
    INSUFFICIENT_PRIVILEGE,
    SYNTAX_ERROR,
    SqlError,
    internal_error,
)
from sql.lex import leading_words, strip_comments
from sql.statements import CopyTo, classify
from sql.types import ARRAY_ELEMENT, SqlType

if TYPE_CHECKING:
    from server.session import Session
    from server.system_host import SystemHost

PARSE_CACHE_SIZE = 512
PLAN_CACHE_SIZE = 1024
RESULT_CACHE_SIZE = 256
RESULT_CACHE_MAX_ROWS = 10_000
_MISS = object()
BATCH_ROWS = 4096

# Words that make a statement worth parsing as a catalog query.
_CATALOG_WORDS = frozenset(
    {*RELATIONS_BY_NAME, *SYSTEM_SCHEMAS, *_FUNCTIONS, "regclass", "regtype", "regproc", "regprocedure",
     "regnamespace", "regrole", "current_schema", "current_user", "session_user", "current_catalog",
     "current_role", "user", "version", "pg_get_keywords", "_pg_expandarray"}
    - {"count", "sum", "min", "max", "avg", "lower", "upper", "length", "coalesce", "nullif", "greatest",
       "least", "abs", "round", "floor", "ceil", "ceiling", "now", "concat", "replace", "left", "right",
       "substr", "substring", "row_number", "rank", "dense_rank", "lag", "lead", "array_agg", "string_agg",
       "bool_and", "bool_or", "every", "mod", "power", "sqrt", "sign", "repeat", "reverse", "md5",
       "translate", "split_part", "strpos", "lpad", "rpad", "btrim", "ltrim", "rtrim", "initcap", "chr",
       "ascii", "date_trunc", "date_part", "starts_with", "unnest", "generate_series", "concat_ws",
       "regexp_replace", "array_position", "array_append", "array_cat", "first_value", "last_value",
       "nth_value", "ntile", "percent_rank", "cume_dist", "octet_length", "char_length",
       "clock_timestamp", "statement_timestamp", "transaction_timestamp", "cardinality",
       "array_to_string", "string_to_array", "array_length", "array_lower", "array_upper"})
_WORD = re.compile(r"[a-z_][a-z0-9_$]*")

# Postgres settings (besides the session variables) that clients read.
_STATIC_SETTINGS = {
    "max_identifier_length": "63", "max_index_keys": "32", "max_function_args": "100", "block_size": "8192",
    "lc_collate": "C", "lc_ctype": "C", "lc_messages": "C", "lc_monetary": "C", "lc_numeric": "C",
    "lc_time": "C", "default_transaction_read_only": "off", "transaction_read_only": "off",
    "default_transaction_deferrable": "off", "transaction_deferrable": "off",
    "max_connections": "5000", "xmloption": "content", "xmlbinary": "base64", "ssl": "off",
    "default_tablespace": "", "temp_tablespaces": "", "array_nulls": "on",
    "backslash_quote": "safe_encoding", "lo_compat_privileges": "off", "quote_all_identifiers": "off",
    "row_security": "on", "default_with_oids": "off", "check_function_bodies": "on", "port": "6875",
    "listen_addresses": "", "krb_caseins_users": "off", "password_encryption": "scram-sha-256",
    "geqo": "on", "jit": "off", "work_mem": "4096", "shared_buffers": "16384",
    "default_table_access_method": "heap",
}
_SETTING_ALIASES = {"default_transaction_isolation": "transaction_isolation", "transaction_isolation_level": "transaction_isolation"}
_PG_SETTINGS = {r[0].lower(): r for r in pg15_data.SETTINGS[1]}
_REG_TYPES = frozenset({"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole"})


class RegValue(int):
    """A reg* value: sent as its OID in binary format and as its name in text format."""

    text: str

    def __new__(cls, oid: int, text: str) -> RegValue:
        v = super().__new__(cls, oid)
        v.text = text
        return v

    def __str__(self) -> str:
        return self.text


# ---- plans -------------------------------------------------------------------------------------

@dataclass
class CatalogPlan:
    """A catalog-only query: DuckDB SQL and how to turn its rows into Postgres values."""

    handler: SystemHandler
    sql: str
    rewritten: Rewritten
    columns: tuple[ColumnDesc, ...]
    copy_out: dict[str, Any] | None = None  # COPY (query) TO STDOUT and its options

    def execute(self, session: Session, params: list[Any]) -> Result:
        h = self.handler
        h.check_txn(session)
        try:
            rw = self.rewritten
            if rw.volatile:
                rw = h.rewrite(session, self.sql, list(rw.param_types))
            if rw.set_config is not None:
                name, value, local = rw.set_config
                session.set(name, value)
            duck_params = [_duck_param(params[i] if i < len(params) else None, rw.param_types[i], h, session)
                           for i in rw.param_map]
            rows = h.run(rw, duck_params)
            rows = h.convert_rows(session, rows, self.columns)
        except SqlError:
            h.fail_txn(session)
            raise
        except Exception as e:  # noqa: BLE001 - DuckDB errors reach clients as Postgres errors
            h.fail_txn(session)
            raise _duck_error(e) from None
        if self.copy_out is not None:
            return CopyOutResult(self.columns, _batched(rows), **self.copy_out)
        return RowsResult(self.columns, _batched(rows))


# ---- the handler -----------------------------------------------------------------------------------

class SystemHandler(UtilityMixin):
    def __init__(self, coordinator: SystemHost) -> None:
        self.coordinator = coordinator
        self._parse_cache: OrderedDict[str, Any] = OrderedDict()
        # (text, parameter types, session fingerprint) -> (rewrite, columns), or (None, catalog
        # version) for statements that are not catalog queries
        self._plan_cache: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
        # Results of catalog queries, by (DuckDB SQL, parameters, catalog version, state
        # version): a catalog query's answer only changes when one of those does.
        self._result_cache: OrderedDict[tuple[Any, ...], list[tuple[Any, ...]]] = OrderedDict()
        self._lock = threading.Lock()
        self.started_at = dt.datetime.now(dt.UTC)
        # Build the system relations in the background so the first client query is fast.
        threading.Thread(target=self._warm, name="system-relations", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.sysdb()
        except Exception:  # noqa: BLE001 - reported again by the first query that needs it
            pass

    def sysdb(self) -> Any:
        return self.coordinator.catalog.system_db()

    # -- entry point -----------------------------------------------------------------------------

    def prepare(self, session: Session, sql: str, param_types: list[SqlType | None]) -> Prepared | None:
        """A Prepared whose `plan` has `execute(session, params) -> Result`, or None."""
        text = strip_comments(sql).strip().rstrip(";").strip()
        if not text:
            return None
        words = leading_words(text, 6)
        w0 = words[0] if words else ""
        try:
            utility = self._utility(session, text, words)
            if utility is not None:
                return utility
            if w0 in ("select", "with", "(", "values", "table"):
                return self._catalog_query(session, sql, text, param_types)
            if w0 == "copy":
                m = re.match(r"(?is)^copy\s*\((.*)\)\s*to\s+stdout\b(.*)$", text)
                if m:
                    inner = self._catalog_query(session, m.group(1), m.group(1).strip(), [])
                    if inner is not None:
                        copy = classify(text)
                        options = copy.options if isinstance(copy, CopyTo) else {}
                        fmt = options.get("format", "text").lower()
                        if fmt not in ("text", "csv"):
                            raise SqlError(FEATURE_NOT_SUPPORTED, f"COPY TO with format {fmt} is not supported")
                        plan: CatalogPlan = inner.plan
                        plan.copy_out = {
                            "csv": fmt == "csv",
                            "delimiter": options.get("delimiter", "," if fmt == "csv" else "\t"),
                            "null": options.get("null", "" if fmt == "csv" else "\\N"),
                            "header": options.get("header", "false").lower() in ("true", "on", "1"),
                        }
                        return Prepared(sql, (), None, plan)
            return None
        except SqlError:
            self.fail_txn(session)
            raise

    # -- transactions ------------------------------------------------------------------------------

    def check_txn(self, session: Session) -> None:
        txn = session.txn
        if txn is not None and txn.failed:
            raise SqlError(IN_FAILED_SQL_TRANSACTION, "current transaction is aborted, commands ignored until end of transaction block")

    def fail_txn(self, session: Session) -> None:
        if session.txn is not None:
            session.txn.failed = True

    # -- catalog queries ---------------------------------------------------------------------------

    def _catalog_query(self, session: Session, sql: str, text: str, param_types: list[SqlType | None]) -> Prepared | None:
        low = text.lower()
        if not any(w in _CATALOG_WORDS for w in _WORD.findall(low)):
            return None
        key = (text, tuple(param_types), self._fingerprint(session))
        self.sysdb().refresh()  # cached rewrites are validated against the current catalog
        version = self.coordinator.catalog.version
        with self._lock:
            hit = self._plan_cache.get(key, _MISS)
            if hit is not _MISS:
                self._plan_cache.move_to_end(key)
        if hit is not _MISS:
            # a rewrite stays valid across DDL while its catalog lookups resolve the same way;
            # "not a catalog query" is only trusted for the catalog version it was decided at
            if hit[0] is None:
                hit = hit if hit[1] == version else _MISS
            elif not deps_hold(hit[0].deps, self.context(session)):
                hit = _MISS
        if hit is _MISS:
            planned = self._plan_uncached(session, text, param_types)
            hit = (None, version) if planned is None else planned
            if hit[0] is None or not hit[0].volatile:
                with self._lock:
                    self._plan_cache[key] = hit
                    if len(self._plan_cache) > PLAN_CACHE_SIZE:
                        self._plan_cache.popitem(last=False)
        rw, columns = hit
        if rw is None:
            return None
        return Prepared(sql, tuple(rw.param_types), columns, CatalogPlan(self, text, rw, columns))

    def _plan_uncached(self, session: Session, text: str, param_types: list[SqlType | None]) -> tuple[Rewritten, tuple[ColumnDesc, ...]] | None:
        ast = self._parse(text)
        if ast is None:
            return None
        if not is_catalog_query(ast, self.context(session)):
            return None
        try:
            rw = self._rewrite_ast(session, ast, param_types)
        except NotCatalog:
            return None
        return rw, self._describe(rw)

    def _parse(self, text: str) -> Any:
        with self._lock:
            hit = self._parse_cache.get(text)
            if hit is not None:
                self._parse_cache.move_to_end(text)
                return hit.copy()
        try:
            ast = parse_pg(text)
        except SqlError:
            raise
        except Exception:  # noqa: BLE001 - not parseable by sqlglot: let the planner report it
            return None
        with self._lock:
            self._parse_cache[text] = ast
            if len(self._parse_cache) > PARSE_CACHE_SIZE:
                self._parse_cache.popitem(last=False)
        return ast.copy()

    def _fingerprint(self, session: Session) -> tuple[Any, ...]:
        """What a rewrite can inline about the session (pid, user, settings)."""
        return (session.pid, session.user, tuple(sorted(session.vars.items())))

    def run(self, rw: Rewritten, params: list[Any]) -> list[tuple[Any, ...]]:
        """Rows of a rewritten catalog query (from the result cache when nothing it can
        depend on changed)."""
        sysdb = self.sysdb()
        sysdb.refresh()
        if rw.volatile:
            return sysdb.query(rw.sql, params)[1]
        try:
            key: tuple[Any, ...] | None = (rw.sql, tuple(params), sysdb.version, sysdb.state_version)
            hash(key)
        except TypeError:  # unhashable parameters (arrays)
            key = None
        if key is not None:
            with self._lock:
                rows = self._result_cache.get(key)
                if rows is not None:
                    self._result_cache.move_to_end(key)
                    return rows
        rows = sysdb.query(rw.sql, params)[1]
        if key is not None and len(rows) <= RESULT_CACHE_MAX_ROWS and sysdb.version == key[2]:
            with self._lock:
                self._result_cache[key] = rows
                if len(self._result_cache) > RESULT_CACHE_SIZE:
                    self._result_cache.popitem(last=False)
        return rows

    def rewrite(self, session: Session, text: str, param_types: list[SqlType | None]) -> Rewritten:
        """Rewrite again (for queries whose result depends on live state)."""
        return self._rewrite_ast(session, self._parse(text), param_types)

    def _rewrite_ast(self, session: Session, ast: Any, param_types: list[SqlType | None]) -> Rewritten:
        sysdb = self.sysdb()
        sysdb.refresh()
        return Rewriter(self.context(session), param_types).rewrite(ast)

    def _describe(self, rw: Rewritten) -> tuple[ColumnDesc, ...]:
        """Column types: the rewrite's where it knows them and DuckDB agrees on the kind of
        value, else DuckDB's result type."""
        try:
            desc = self.sysdb().describe(rw.sql, [None] * len(rw.param_map))
        except SqlError:
            raise
        except Exception as e:  # noqa: BLE001
            raise _duck_error(e) from None
        out = []
        for i, name in enumerate(rw.names):
            duck = desc[i][1] if i < len(desc) else "VARCHAR"
            if name == "*":
                name = desc[i][0] if i < len(desc) else name
            t = rw.types[i] if i < len(rw.types) else None
            if t is None or not _compatible(t, duck):
                t = pg_type_of_duck(duck)
            out.append(ColumnDesc(name, t))
        if len(desc) > len(rw.names):  # an unexpanded * produced more columns
            out = [ColumnDesc(n, pg_type_of_duck(d)) for n, d in desc]
        return tuple(out)

    def context(self, session: Session) -> Context:
        coord = self.coordinator
        catalog = coord.catalog
        sysdb = self.sysdb()

        def user_relation(parts: tuple[str, ...]) -> bool:
            if len(parts) >= 2:
                return catalog.get_item(parts[-2], parts[-1]) is not None
            return any(catalog.get_item(s, parts[0]) is not None for s in session.search_path())

        return Context(
            user=session.user,
            database=session.database,
            pid=session.pid,
            search_path=tuple(session.search_path()),
            setting=lambda name: self.setting(session, name),
            settings=lambda: {**_STATIC_SETTINGS, **{REPORTED_NAMES.get(k, k).lower(): v for k, v in session.vars.items()}, **session.vars},
            lookups=sysdb.lookups,
            schema_exists=catalog.schema_exists,
            user_relation=user_relation,
            session_rows=lambda rel: self.session_rows(session, rel),
            visible_key=sysdb.visible_key,
            started_at=self.started_at,
            version=SERVER_VERSION_TEXT,
            environment_id=catalog.environment_id,
        )

    def setting(self, session: Session, name: str) -> str | None:
        key = _SETTING_ALIASES.get(name.lower(), name.lower())
        if key in session.vars:
            return session.vars[key]
        if key in _STATIC_SETTINGS:
            return _STATIC_SETTINGS[key]
        return None

    # -- system relations for the planner ---------------------------------------------------------

    def relation_rows(self, session: Session, parts: tuple[str, ...]) -> tuple[list[tuple[str, SqlType]], list[tuple[Any, ...]]] | None:
        """Columns and current rows of the system relation `parts` names ((schema, name) or
        (name,), resolved like a catalog query resolves it), or None if there is none. For
        queries that join system relations with user relations: the planner reads the
        system relation as a constant input (DESIGN §2)."""
        rel = _system_relation(tuple(parts), self.context(session))
        if rel is None:
            return None
        columns = list(rel.columns)
        if rel.session:
            rows = self.session_rows(session, f"{rel.schema}.{rel.name}")
        else:
            rw = Rewritten(f"SELECT * FROM {rel.duck}", [c for c, _ in columns], [t for _, t in columns], [], False)
            rows = self.run(rw, [])
        descs = tuple(ColumnDesc(c, t) for c, t in columns)
        return columns, self.convert_rows(session, rows, descs)

    # -- session relations -------------------------------------------------------------------------

    def session_rows(self, session: Session, rel: str) -> list[tuple[Any, ...]]:
        if rel == "pg_catalog.pg_settings":
            return self._settings_rows(session)
        if rel == "pg_catalog.pg_stat_activity":
            rows = []
            for s in list(self.coordinator._sessions.values()):
                started = getattr(s, "connected_at", self.started_at)
                mine = s is session
                rows.append((16384, s.database, s.pid, None, 10, s.user, s.vars.get("application_name", ""),
                             None, None, -1, started, None, started if mine else None, started,
                             None, None, "active" if mine else "idle", None, None, None, "" if not mine else "<catalog query>",
                             "client backend"))
            return rows
        if rel == "mz_internal.mz_sessions":
            return [(f"{s.pid:08x}", s.pid, "u1", None, getattr(s, "connected_at", self.started_at))
                    for s in list(self.coordinator._sessions.values())]
        if rel == "mz_internal.mzspark_spark_jobs":
            return [(self.spark_jobs_started(), *self.spark_planning())]
        if rel == "mz_internal.mzspark_spark_storage":
            from compute.render.spark import storage_memory

            spark = self.coordinator.compute.current
            return [(0, 0)] if spark is None else [storage_memory(spark)]
        if rel == "mz_internal.mz_compute_frontiers":
            ctl = self.coordinator.controller
            return [] if ctl is None else [(o, r, t) for o, r, t in ctl.frontiers() if t > 0]
        if rel == "mz_internal.mz_cluster_replica_statuses":
            from compute.controller import REPLICA_ID

            status, reason, since = self.coordinator.compute.replica_status()
            return [(REPLICA_ID, 0, status, reason, since)]
        if rel == "mz_internal.mzspark_dataflow_expiration":
            ctl = self.coordinator.controller
            return [] if ctl is None else ctl.expirations()
        return []

    def _settings_rows(self, session: Session) -> list[tuple[Any, ...]]:
        rows = []
        seen = set()
        for key, value in sorted(session.vars.items()):
            shown = REPORTED_NAMES.get(key, key)
            pg = _PG_SETTINGS.get(key)
            vartype = "bool" if key in BOOL_VARS else (pg[7] if pg else "string")
            context = "internal" if key in READ_ONLY else "user"
            source = "session" if session.defaults.get(key) != value and key not in READ_ONLY else "default"
            desc = pg[4] if pg else f"Materialize session variable {shown}."
            category = pg[3] if pg else "Materialize"
            rows.append((shown, value, None, category, desc, None, context, vartype, source, None, None, None,
                         SESSION_VARS.get(key, ("", False))[0], session.defaults.get(key, value), None, None, False))
            seen.add(key)
        for key, value in sorted(_STATIC_SETTINGS.items()):
            if key in seen or key == "search_path":
                continue
            pg = _PG_SETTINGS.get(key)
            rows.append((key, value, pg[2] if pg else None, pg[3] if pg else "Preset Options",
                         pg[4] if pg else "", None, "internal", pg[7] if pg else "string", "default",
                         None, None, None, value, value, None, None, False))
        return rows

    def spark_planning(self) -> tuple[int, int]:
        """(analyzer / optimizer rule runs, Spark plan template uses) of the driver so far."""
        spark = self.coordinator.compute.current
        if spark is None:
            return 0, 0
        from compute.render import templates

        return templates.rule_runs(spark), templates.counts(spark)[0]

    def spark_jobs_started(self) -> int:
        """How many Spark jobs this server has started (0 if Spark never started)."""
        spark = self.coordinator.compute.current
        if spark is None:
            return 0
        sc = spark.sparkContext._jsc.sc()
        try:
            # DAGScheduler.nextJobId: an AtomicInteger, which py4j hands over as an int
            n = sc.dagScheduler().nextJobId()
            return int(n) if isinstance(n, int) else int(n.get())
        except Exception:  # noqa: BLE001 - fall back to the jobs the status store retains
            jobs = sc.statusStore().jobsList(None)
            return max((int(j.jobId()) for j in jobs), default=-1) + 1

    # -- values ------------------------------------------------------------------------------------

    def convert_rows(self, session: Session, rows: list[tuple[Any, ...]], columns: tuple[ColumnDesc, ...]) -> list[tuple[Any, ...]]:
        convs = [self._converter(session, c.type) for c in columns]
        if not any(convs):
            return rows
        out = []
        for r in rows:
            out.append(tuple(v if f is None or v is None else f(v) for v, f in zip(r, convs, strict=False)))
        return out

    def _converter(self, session: Session, t: SqlType) -> Any:
        if t.name in _REG_TYPES:
            lk = self.sysdb().lookups
            path = self.context(session).visibility_path
            name = t.name
            if name == "regclass":
                def reg(v: Any) -> Any:
                    cls = lk.classes.get(int(v))
                    if cls is None:
                        return RegValue(int(v), str(int(v)))
                    schema, rel = cls
                    visible = next((s for s in path if (s, rel) in lk.class_oids), None) == schema
                    return RegValue(int(v), _qi(rel) if visible else f"{_qi(schema)}.{_qi(rel)}")
                return reg
            if name == "regtype":
                return lambda v: RegValue(int(v), "-" if int(v) == 0 else lk.types.get(int(v), str(int(v))))
            if name in ("regproc", "regprocedure"):
                return lambda v: RegValue(int(v), "-" if int(v) == 0 else lk.procs.get(int(v), str(int(v))))
            if name == "regnamespace":
                return lambda v: RegValue(int(v), lk.namespaces.get(int(v), str(int(v))))
            return lambda v: RegValue(int(v), "-" if int(v) == 0 else lk.roles.get(int(v), str(int(v))))
        if t.name == "numeric":
            from decimal import Decimal

            return lambda v: v if isinstance(v, Decimal) else Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
        if t.name in ("text", "name", "varchar", "bpchar", "char"):
            return lambda v: v if isinstance(v, str) else _text_of(v)
        if t.name in ARRAY_ELEMENT:
            return lambda v: v if isinstance(v, list) else v
        return None


# ---- helpers -----------------------------------------------------------------------------------------

_QI = re.compile(r"[a-z_][a-z0-9_$]*")


def _qi(s: str) -> str:
    return s if _QI.fullmatch(s) else '"' + s.replace('"', '""') + '"'


def _text_of(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "{" + ",".join("NULL" if x is None else _text_of(x) for x in v) + "}"
    return str(v)


def _duck_param(v: Any, t: SqlType, handler: SystemHandler, session: Session) -> Any:
    """A client parameter as DuckDB gets it (after `CAST($n AS <storage type>)`); reg*
    parameters given as names are resolved like Postgres' input functions do."""
    if v is None:
        return None
    if t.name in _REG_TYPES and isinstance(v, str):
        return Rewriter(handler.context(session), []).resolve_reg(t.name, v)
    if t.name in ARRAY_ELEMENT and isinstance(v, str):
        from sql.text_input import parse_text

        return parse_text(v, t)
    from decimal import Decimal

    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, RegValue):
        return int(v)
    return v


_DUCK_KIND = {
    "VARCHAR": "str", "UINTEGER": "int", "SMALLINT": "int", "INTEGER": "int", "BIGINT": "int", "HUGEINT": "int",
    "UBIGINT": "int", "USMALLINT": "int", "UTINYINT": "int", "TINYINT": "int", "FLOAT": "float", "DOUBLE": "float",
    "BOOLEAN": "bool", "INTERVAL": "interval", "TIMESTAMP WITH TIME ZONE": "tstz", "TIMESTAMPTZ": "tstz",
    "TIMESTAMP": "ts", "DATE": "date", "TIME": "time", "BLOB": "bytes",
}


def _kind_of_pg(t: SqlType) -> str:
    from catalog.system.relations import duck_type

    d = duck_type(t)
    if d.endswith("[]"):
        return "list"
    return _DUCK_KIND.get(d, "str")


def _compatible(t: SqlType, duck: str) -> bool:
    d = duck.upper()
    if d.endswith("[]"):
        return _kind_of_pg(t) == "list"
    if d.startswith("DECIMAL"):
        return t.name == "numeric" or _kind_of_pg(t) == "float"
    kind = _DUCK_KIND.get(d)
    if d in ('"NULL"', "NULL"):
        return True
    if kind is None:
        return False
    mine = _kind_of_pg(t)
    if mine == "str" and t.name in ("text", "name", "varchar", "bpchar", "char"):
        return True  # anything can be shown as text
    if mine == "float" and kind == "int":
        return True
    return mine == kind


def _duck_error(e: Exception) -> SqlError:
    msg = str(e).split("\n")[0]
    name = type(e).__name__
    if (tagged := re.search(RUNTIME_ERROR_TAG + r" ([0-9A-Z]{5}): (.*)", msg)) is not None:
        return SqlError(tagged.group(1), tagged.group(2))  # a call the rewrite made raise (_raises)
    if "Permission" in name:
        return SqlError(INSUFFICIENT_PRIVILEGE, "permission denied")
    if "Conversion" in name or "conversion" in msg.lower():
        return SqlError("22P02", msg)
    if "Binder" in name and "'list_contains(" in msg:  # only `x = ANY (a)` is rewritten to it
        return SqlError("42809", "op ANY/ALL (array) requires array on right side")
    if "Binder" in name or "Catalog" in name:
        return SqlError("42703" if "column" in msg.lower() else "42883", msg)
    if "OutOfRange" in name:
        return SqlError("22003", msg)
    if "Parser" in name:
        return SqlError(SYNTAX_ERROR, msg)
    return internal_error(e)


def _batched(rows: list[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    for i in range(0, len(rows), BATCH_ROWS):
        yield rows[i : i + BATCH_ROWS]
