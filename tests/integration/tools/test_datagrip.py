"""DataGrip / JetBrains database tools (the PostgreSQL introspector, via pgjdbc): the start-up
probes and the per-schema introspection queries, which read system columns (`xmin` as the
state number), cast oids to bigint, use `current_schemas(false)`, `txid_current()`, `age()`,
`pg_inherits`, `pg_locks`, and 0-based `int2vector` subscripts of `pg_index`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, spark_jobs

pytestmark = pytest.mark.integration

STARTUP = [
    "select version()",
    "select current_database() as a, current_schemas(false) as b",
    """select case
  when pg_catalog.pg_is_in_recovery()
    then null
  else
    pg_catalog.txid_current()::varchar::bigint
  end as current_txid""",
    """select L.transactionid::varchar::bigint as transaction_id
from pg_catalog.pg_locks L
where L.transactionid is not null
order by pg_catalog.age(L.transactionid) desc
limit 1""",
    """select N.oid::bigint as id,
       datname as name,
       D.description,
       datistemplate as is_template,
       datallowconn as allow_connections,
       pg_catalog.pg_get_userbyid(N.datdba) as "owner"
from pg_catalog.pg_database N
  left join pg_catalog.pg_shdescription D on N.oid = D.objoid
order by case when datname = pg_catalog.current_database() then -1::bigint else N.oid::bigint end""",
    """select R.oid::bigint as role_id, rolname as role_name,
  rolsuper is_super, rolinherit is_inherit,
  rolcreaterole can_createrole, rolcreatedb can_createdb,
  rolcanlogin can_login, rolreplication is_replication,
  rolconnlimit conn_limit, rolvaliduntil valid_until,
  rolbypassrls bypass_rls, rolconfig config,
  D.description
from pg_catalog.pg_roles R
  left join pg_catalog.pg_shdescription D on D.objoid = R.oid""",
]

SCHEMAS = """select N.oid::bigint as id,
       N.xmin as state_number,
       nspname as name,
       D.description,
       pg_catalog.pg_get_userbyid(N.nspowner) as "owner"
from pg_catalog.pg_namespace N
  left join pg_catalog.pg_description D on N.oid = D.objoid
order by case when nspname = pg_catalog.current_schema() then -1::bigint else N.oid::bigint end"""

TABLES = """select T.relkind as table_kind,
       T.relname as table_name,
       T.oid as table_id,
       T.xmin as table_state_number,
       false /* T.relhasoids */ as table_with_oids,
       T.reltablespace as tablespace_id,
       T.reloptions as options,
       T.relpersistence as persistence,
       (select pg_catalog.array_agg(inhparent::bigint order by inhseqno)::varchar from pg_catalog.pg_inherits where T.oid = inhrelid) as ancestors,
       (select pg_catalog.array_agg(inhrelid::bigint order by inhrelid)::varchar from pg_catalog.pg_inherits where T.oid = inhparent) as successors,
       T.relispartition /* false */ as is_partition,
       pg_catalog.pg_get_partkeydef(T.oid) /* null */ as partition_key,
       pg_catalog.pg_get_expr(T.relpartbound, T.oid) /* null */ as partition_expression,
       T.relam am_id,
       pg_catalog.pg_get_userbyid(T.relowner) as "owner"
from pg_catalog.pg_class T
where relnamespace = %s::oid
  and relkind in ('r', 'm', 'v', 'f', 'p')
order by table_kind, table_id"""

COLUMNS = """select attrelid as table_id,
       attnum as column_position,
       attname as column_name,
       atttypmod as type_mod,
       attndims as dimensions_number,
       pg_catalog.format_type(atttypid, atttypmod) as type_spec,
       atttypid as type_id,
       attnotnull as mandatory,
       pg_catalog.pg_get_expr(D.adbin, D.adrelid) /* D.adsrc */ as column_default_expression,
       not attislocal as column_is_inherited,
       attidentity as identity_kind,
       attgenerated as generated
from pg_catalog.pg_attribute
    left join pg_catalog.pg_attrdef D on attrelid = adrelid and attnum = adnum
where attrelid in (select oid from pg_catalog.pg_class where relnamespace = %s::oid)
  and attnum > 0
  and not attisdropped
order by table_id, column_position"""

KEYS = """select oid::bigint as id,
       conname as name,
       contype as type,
       conrelid::bigint as table_id,
       conkey as key_columns,
       confkey as ref_columns,
       conindid::bigint as index_id,
       condeferrable as is_deferrable,
       condeferred as is_init_deferred,
       confupdtype as on_update,
       confdeltype as on_delete,
       pg_catalog.pg_get_constraintdef(oid) as con_def
from pg_catalog.pg_constraint
where connamespace = %s::oid
  and contype in ('p', 'u', 'f', 'c', 'x')
order by table_id, id"""

INDEX_COLUMNS = """select ind_head.indexrelid index_id,
       k col_idx,
       k <= indnkeyatts in_key,
       ind_head.indkey[k-1] column_position,
       ind_head.indoption[k-1] column_options,
       ind_head.indcollation[k-1] as collation,
       colls.collname as collation_str,
       ind_head.indclass[k-1] as opclass,
       case when opcdefault then null else opcname end as opclass_str
from (
       select indexrelid, indrelid, indkey, indoption, indcollation, indclass, indnkeyatts
       from pg_catalog.pg_index
       where indrelid in (select oid from pg_catalog.pg_class where relnamespace = %s::oid)
     ) ind_head
     join pg_catalog.generate_series(1, 32) k on k <= pg_catalog.array_length(ind_head.indkey, 1)
     left join pg_catalog.pg_opclass on ind_head.indclass[k-1] = pg_opclass.oid
     left join pg_catalog.pg_collation colls on ind_head.indcollation[k-1] = colls.oid
order by index_id, k"""

ROUTINES = """select P.oid::bigint as id, P.xmin as state_number, P.proname as name,
       pg_catalog.pg_get_function_arguments(P.oid) as arguments_def,
       pg_catalog.pg_get_function_result(P.oid) as result_def,
       P.prokind as kind
from pg_catalog.pg_proc P
where P.pronamespace = %s::oid
order by P.oid"""


def test_datagrip_introspection(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("events")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (id bigint NOT NULL, kind text, at timestamptz, PRIMARY KEY (id))")
        conn.execute(f"CREATE INDEX {t}_kind ON {t} (kind)")
        jobs = spark_jobs(conn)
        for sql in STARTUP:
            run_extended(conn, sql)
        assert run_extended(conn, STARTUP[1]) == [("materialize", ["public"])]
        schemas = run_extended(conn, SCHEMAS)
        assert schemas[0][2] == "public"  # the current schema first
        public = schemas[0][0]
        tables = run_extended(conn, TABLES, (public,))
        mine = [r for r in tables if r[1] == t]
        assert len(mine) == 1 and mine[0][0] == "r" and mine[0][8] is None
        table_id = mine[0][2]
        cols = [r for r in run_extended(conn, COLUMNS, (public,)) if r[0] == table_id]
        assert [(r[1], r[2], r[5], r[7]) for r in cols] == [
            (1, "id", "bigint", True), (2, "kind", "text", False), (3, "at", "timestamp with time zone", False)]
        keys = [r for r in run_extended(conn, KEYS, (public,)) if r[3] == table_id]
        assert [(r[1], r[2], r[4], r[11]) for r in keys] == [(f"{t}_pkey", "p", [1], "PRIMARY KEY (id)")]
        index_cols = run_extended(conn, INDEX_COLUMNS, (public,))
        positions = {(r[0], r[1]): r[3] for r in index_cols}
        assert (keys[0][6], 1) in positions and positions[(keys[0][6], 1)] == 1
        assert 2 in positions.values()  # the kind index: column 2
        assert run_extended(conn, ROUTINES, (public,)) == []
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
