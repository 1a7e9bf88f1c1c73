"""Per-connection session state: variables, transaction, notices."""

from __future__ import annotations

import itertools
import re
import secrets
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sql.errors import FEATURE_NOT_SUPPORTED, INVALID_PARAMETER_VALUE, UNDEFINED_PARAMETER, SqlError

_pids = itertools.count(1000)

# name -> (default, reported to the client as ParameterStatus)
SESSION_VARS: dict[str, tuple[str, bool]] = {
    "application_name": ("", True),
    "bytea_output": ("hex", False),
    "client_encoding": ("UTF8", True),
    "client_min_messages": ("notice", False),
    "cluster": ("quickstart", False),
    "cluster_replica": ("", False),
    "database": ("materialize", False),
    "datestyle": ("ISO, MDY", True),
    "extra_float_digits": ("3", False),
    "integer_datetimes": ("on", True),
    "intervalstyle": ("postgres", True),
    "is_superuser": ("off", True),
    "search_path": ("public", False),
    "server_encoding": ("UTF8", True),
    "server_version": ("9.5.0", True),
    "server_version_num": ("90500", False),
    "standard_conforming_strings": ("on", True),
    "statement_timeout": ("0", False),
    "timezone": ("UTC", True),
    "transaction_isolation": ("strict serializable", False),
    "enable_monotonic_oneshot_selects": ("on", False),
    "enable_consolidate_after_union_negate": ("on", False),
    # join lookups of at most this many records (known exactly) are broadcast; 0: never
    "broadcast_join_threshold_rows": ("100000", False),
    "mz_version": ("v0.1.0 (mzspark)", True),
    "idle_in_transaction_session_timeout": ("0", False),
    "max_query_result_size": ("1GB", False),
    "emit_timestamp_notice": ("off", False),
    "emit_trace_id_notice": ("off", False),
    "auto_route_introspection_queries": ("on", False),
    "welcome_message": ("off", False),
    # PostgreSQL's warning for backslashes in ordinary literals; they are never escapes here
    "escape_string_warning": ("on", False),
    # dataflow expiration (compute.expiration): an interval; 0 = off. ALTER SYSTEM SET only
    "compute_replica_expiration_offset": ("0", False),
    # rows a subscription may buffer for a slow client before it ends with 53200
    "subscribe_buffer_rows": ("100000", False),
    # operator hydration statuses are reported (compute.hydration; Materialize's name)
    "enable_compute_operator_hydration_status_logging": ("on", False),
}
# version()
SERVER_VERSION_TEXT = "PostgreSQL 9.5.0 on x86_64-pc-linux-gnu, compiled by mzspark (Materialize dialect on Apache Spark)"
# Postgres' spelling of reported names
REPORTED_NAMES = {"datestyle": "DateStyle", "intervalstyle": "IntervalStyle", "timezone": "TimeZone"}
# system variables: ALTER SYSTEM SET changes them, a session's SET may not
SYSTEM_ONLY = {"compute_replica_expiration_offset"}
READ_ONLY = {"server_version", "server_version_num", "server_encoding", "integer_datetimes", "is_superuser", "mz_version"}
BOOL_VARS = {"enable_monotonic_oneshot_selects", "enable_consolidate_after_union_negate", "emit_timestamp_notice", "emit_trace_id_notice", "auto_route_introspection_queries", "welcome_message", "escape_string_warning",
             "enable_compute_operator_hydration_status_logging"}


def normalize_bool(name: str, value: str) -> str:
    v = value.strip().lower()
    if v in ("on", "true", "t", "yes", "1"):
        return "on"
    if v in ("off", "false", "f", "no", "0"):
        return "off"
    raise SqlError(INVALID_PARAMETER_VALUE, f'parameter "{name}" requires a Boolean value')


_BYTE_UNITS = {"": 1, "b": 1, "kb": 1 << 10, "kib": 1 << 10, "mb": 1 << 20, "mib": 1 << 20,
               "gb": 1 << 30, "gib": 1 << 30, "tb": 1 << 40, "tib": 1 << 40}


def parse_bytes(name: str, value: str) -> int:
    """A memory size setting ("1GB", "512 MB", "1048576"; units are powers of 1024)."""
    m = re.fullmatch(r"(\d+)\s*([a-z]*)", value.strip().lower())
    if not m or m.group(2) not in _BYTE_UNITS:
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"')
    return int(m.group(1)) * _BYTE_UNITS[m.group(2)]


_DATE_ORDERS = {"mdy": "MDY", "us": "MDY", "noneuropean": "MDY", "dmy": "DMY", "european": "DMY", "euro": "DMY", "ymd": "YMD"}
_DATE_STYLES = {"iso": "ISO", "sql": "SQL", "postgres": "Postgres", "german": "German"}


def normalize_datestyle(value: str, current: str) -> str:
    """DateStyle as Postgres reports it ('ISO, MDY'). Only the ISO output style is
    implemented: the other styles are refused (0A000) rather than silently ignored. The
    field order only matters for the ambiguous inputs (01/02/03), which are refused."""
    style, order = (p.strip() for p in current.split(",", 1))
    for tok in value.replace(",", " ").split():
        t = tok.strip().strip("'\"").lower()
        if t in _DATE_STYLES:
            style = _DATE_STYLES[t]
        elif t in _DATE_ORDERS:
            order = _DATE_ORDERS[t]
        elif t != "default":
            raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "DateStyle": "{value}"',
                           detail=f'Unrecognized key word: "{tok}".')
    if style != "ISO":
        raise SqlError(FEATURE_NOT_SUPPORTED, f'DateStyle "{style}" is not supported', hint="Only the ISO output style is supported.")
    return f"{style}, {order}"


def timezone_refusal(value: str) -> SqlError:
    """A time zone other than UTC: results would print and compute in UTC, so it is refused;
    0A000 when Postgres would accept the name, 22023 when it would not either."""
    import zoneinfo

    known = bool(re.fullmatch(r"[+-]?\d{1,2}(:\d{2}){0,2}", value.strip()))
    if not known:
        try:
            zoneinfo.ZoneInfo(value.strip())
            known = True
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            known = False
    if known:
        return SqlError(FEATURE_NOT_SUPPORTED, f'TimeZone "{value}" is not supported', hint="Only UTC is supported.")
    return SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "TimeZone": "{value}"', hint="Only UTC is supported.")


def normalize_extra_float_digits(value: str) -> str:
    """extra_float_digits: an integer from -15 to 3 (Postgres' range)."""
    try:
        n = int(value.strip())
    except ValueError:
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "extra_float_digits": "{value}"') from None
    if not -15 <= n <= 3:
        raise SqlError(INVALID_PARAMETER_VALUE, f"{n} is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)")
    return str(n)


def normalize_intervalstyle(value: str) -> str:
    """IntervalStyle: postgres, postgres_verbose and iso_8601 print results (server.pgwire
    codec; intervals never become text inside queries). sql_standard also changes how
    interval input reads a leading minus sign, which is not implemented: refused."""
    v = value.strip().lower()
    if v in ("postgres", "postgres_verbose", "iso_8601"):
        return v
    if v == "sql_standard":
        raise SqlError(FEATURE_NOT_SUPPORTED, f'IntervalStyle "{v}" is not supported',
                       hint="Supported: postgres, postgres_verbose, iso_8601.")
    raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "IntervalStyle": "{value}"',
                   hint='Available values: postgres, postgres_verbose, sql_standard, iso_8601.')


def normalize_standard_conforming_strings(value: str) -> str:
    """standard_conforming_strings: only on (a backslash in '..' is itself; E'..' takes
    escapes). off would change how every literal reads: refused (0A000), not ignored."""
    v = value.strip().strip("'").lower()
    if v in ("on", "true", "yes", "1"):
        return "on"
    if v in ("off", "false", "no", "0"):
        raise SqlError(FEATURE_NOT_SUPPORTED, "standard_conforming_strings = off is not supported",
                       hint="Backslashes in ordinary string literals are always literal; write E'..' for escapes.")
    raise SqlError(INVALID_PARAMETER_VALUE, 'parameter "standard_conforming_strings" requires a Boolean value')


def parse_duration_ms(value: str) -> int:
    v = value.strip().lower()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s|sec|min|h|us)?", v)
    if not m:
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "statement_timeout": "{value}"')
    n = float(m.group(1))
    mult = {"ms": 1, None: 1, "s": 1000, "sec": 1000, "min": 60000, "h": 3600000, "us": 0.001}[m.group(2)]
    return int(n * mult)


_DURATION_UNITS = (("day", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1))


def parse_offset_ms(name: str, value: str) -> int:
    """An interval setting in ms ('1 day', '30s', '00:00:05', '0'; months count 30 days);
    never negative."""
    from sql.interval import parse_interval

    v = value.strip().strip("'")
    try:
        iv = parse_interval(v)
    except SqlError:
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"') from None
    ms = ((iv.months * 30 + iv.days) * 86_400_000_000 + iv.micros) // 1000
    if ms < 0:
        raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "{name}": "{value}"',
                       detail="The interval must not be negative.")
    return ms


def format_offset_ms(ms: int) -> str:
    """An interval setting as shown ('0', '1day', '1day 2h', '30s', '250ms')."""
    if ms == 0:
        return "0"
    parts = []
    for unit, size in _DURATION_UNITS:
        n, ms = divmod(ms, size)
        if n:
            parts.append(f"{n}{unit}{'s' if unit == 'day' and n > 1 else ''}")
    return " ".join(parts)


@dataclass
class Transaction:
    kind: str | None = None  # None (not yet decided) | "write" | "read"
    read_only: bool = False
    read_ts: int | None = None
    writes: list[tuple[Any, list[tuple[Any, ...]], list[int]]] = field(default_factory=list)  # (item, rows, diffs)
    failed: bool = False
    # SAVEPOINTs (server.system): (name, number of buffered writes, kind) innermost last
    savepoints: list[tuple[str, int, str | None]] = field(default_factory=list)
    implicit: bool = False  # a multi-statement simple query (Postgres' implicit transaction)


class Session:
    def __init__(self, user: str, database: str, options: dict[str, str],
                 system_defaults: dict[str, str] | None = None) -> None:
        self.pid = next(_pids)
        self.secret = secrets.randbits(31)
        self.user = user
        self.database = database
        self.vars: dict[str, str] = {k: v for k, (v, _) in SESSION_VARS.items()}
        # ALTER SYSTEM SET values (already validated) replace the built-in defaults
        self.vars.update({k: v for k, v in (system_defaults or {}).items() if k in self.vars})
        self.defaults: dict[str, str] = dict(self.vars)
        self.option_keys = {k.lower() for k in options}  # defaults the connection chose
        self._changed: dict[str, str] = {}
        self._notices: list[tuple[str, str, str]] = []
        self._deallocations: list[str | None] = []
        self.txn: Transaction | None = None
        self.lock = threading.Lock()
        self.running_tag: str | None = None
        self.cancel_reason: str | None = None
        # Set by server.system: open cursors (DECLARE) and when the session started.
        self.cursors: dict[str, Any] = {}
        self.connected_at = datetime.now(UTC)
        for k, v in options.items():
            key = k.lower()
            if key in SESSION_VARS and key not in READ_ONLY:
                if key == "datestyle":
                    v = normalize_datestyle(v, self.vars[key])
                elif key == "intervalstyle":
                    v = normalize_intervalstyle(v)
                elif key == "standard_conforming_strings":
                    v = normalize_standard_conforming_strings(v)
                self.vars[key] = v
                self.defaults[key] = v
        self.vars["is_superuser"] = "on" if user in ("materialize", "mz_system") else "off"

    # --- server.api.Session -----------------------------------------------------------
    def parameter_status(self) -> dict[str, str]:
        return {REPORTED_NAMES.get(k, k): self.vars[k] for k, (_, rep) in SESSION_VARS.items() if rep}

    def take_changed_parameters(self) -> dict[str, str]:
        out, self._changed = self._changed, {}
        return out

    def deallocate(self, name: str | None) -> None:
        """DEALLOCATE name (None: ALL): the protocol layer drops the prepared statement."""
        self._deallocations.append(name)

    def take_deallocations(self) -> list[str | None]:
        out, self._deallocations = self._deallocations, []
        return out

    def take_notices(self) -> list[tuple[str, str, str]]:
        out, self._notices = self._notices, []
        return out

    def notice(self, message: str, sqlstate: str = "00000", severity: str = "NOTICE") -> None:
        self._notices.append((severity, sqlstate, message))

    @property
    def transaction_status(self) -> str:
        if self.txn is None:
            return "I"
        return "E" if self.txn.failed else "T"

    def system_default_changed(self, name: str, value: str) -> None:
        """ALTER SYSTEM SET/RESET: the new default, also the value if the session did not set it."""
        if name in self.option_keys or name not in self.defaults:
            return
        if self.vars[name] == self.defaults[name]:
            self.vars[name] = value
            if SESSION_VARS[name][1]:
                self._changed[REPORTED_NAMES.get(name, name)] = value
        self.defaults[name] = value

    def abort_transaction(self) -> None:
        """An error reached the client: an open transaction block is failed (Postgres)."""
        if self.txn is not None:
            self.txn.failed = True

    # --- variables --------------------------------------------------------------------
    def get(self, name: str) -> str:
        key = name.lower()
        if key == "transaction_isolation_level":
            key = "transaction_isolation"
        if key not in self.vars:
            raise SqlError(UNDEFINED_PARAMETER, f'unrecognized configuration parameter "{name}"')
        return self.vars[key]

    def reset_all(self) -> None:
        """RESET ALL / DISCARD ALL: every variable a session may set back to its default."""
        for k in SESSION_VARS:
            if k not in READ_ONLY and k not in SYSTEM_ONLY:
                self.set(k, None)

    def set(self, name: str, value: str | None, system: bool = False) -> None:
        """SET (or, `system`, the value ALTER SYSTEM SET validates and normalizes)."""
        key = name.lower()
        if key not in self.vars:
            raise SqlError(UNDEFINED_PARAMETER, f'unrecognized configuration parameter "{name}"')
        if key in READ_ONLY or (key in SYSTEM_ONLY and not system):
            raise SqlError("55P02", f'parameter "{name}" cannot be changed',
                           hint="Use ALTER SYSTEM SET." if key in SYSTEM_ONLY else None)
        if value is None:
            value = self.defaults[key]
        elif key in SYSTEM_ONLY:
            value = format_offset_ms(parse_offset_ms(key, value))
        elif key in BOOL_VARS:
            value = normalize_bool(key, value)
        elif key == "statement_timeout":
            parse_duration_ms(value)
        elif key in ("broadcast_join_threshold_rows", "subscribe_buffer_rows"):
            if not value.strip().isdigit():
                raise SqlError(INVALID_PARAMETER_VALUE, f'parameter "{name}" requires a non-negative integer value')
            value = str(int(value))
        elif key == "max_query_result_size":
            parse_bytes(key, value)
        elif key == "transaction_isolation":
            v = value.lower()
            if v not in ("serializable", "strict serializable"):
                raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "transaction_isolation": "{value}"')
            value = v
        elif key == "timezone" and value.upper() not in ("UTC", "GMT", "+00:00", "Z", "ETC/UTC", "UNIVERSAL"):
            raise timezone_refusal(value)
        elif key == "bytea_output":
            v = value.strip().strip("'").lower()
            if v not in ("hex", "escape"):
                raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "bytea_output": "{value}"',
                               hint="Available values: escape, hex.")
            value = v
        elif key == "extra_float_digits":
            value = normalize_extra_float_digits(value)
        elif key == "datestyle":
            value = normalize_datestyle(value, self.vars["datestyle"])
        elif key == "intervalstyle":
            value = normalize_intervalstyle(value)
        elif key == "standard_conforming_strings":
            value = normalize_standard_conforming_strings(value)
        elif key == "client_encoding" and value.upper().replace("-", "") not in ("UTF8", "UNICODE"):
            raise SqlError(INVALID_PARAMETER_VALUE, f'invalid value for parameter "client_encoding": "{value}"')
        self.vars[key] = value
        if SESSION_VARS[key][1]:
            self._changed[REPORTED_NAMES.get(key, key)] = value

    def flag(self, name: str) -> bool:
        return self.vars.get(name, "off") == "on"

    def search_path(self) -> list[str]:
        return [p.strip().strip('"') for p in self.vars["search_path"].split(",") if p.strip()]

    def max_result_bytes(self) -> int:
        return parse_bytes("max_query_result_size", self.vars["max_query_result_size"])

    def statement_timeout_ms(self) -> int:
        return parse_duration_ms(self.vars["statement_timeout"])
