"""Developer tool: extract the reference data of the system relations from a real
PostgreSQL 15 and write `catalog/system/pg15_data.py`.

    python -m catalog.system.gen_pg15 "host=127.0.0.1 port=55432 user=materialize dbname=postgres"

What is taken from Postgres (so that OIDs, column names, column types and built-in rows are
Postgres' own, not guesses): the column lists of the `pg_catalog` and `information_schema`
relations we serve, the relations' OIDs and kinds, the `pg_type` rows of the types we
support, the `pg_proc` rows of their I/O functions and of the catalog functions we answer,
`pg_am`, `pg_collation`, `pg_get_keywords()`, `pg_language`, and the descriptions of the
settings in `pg_settings`. Never imported at run time: it needs psycopg and a server.
"""

from __future__ import annotations

import pprint
import sys
from pathlib import Path

PG_CATALOG_RELATIONS = """
pg_aggregate pg_am pg_amop pg_amproc pg_attrdef pg_attribute pg_auth_members pg_authid
pg_available_extensions pg_cast pg_class pg_collation pg_constraint pg_conversion pg_database
pg_default_acl pg_depend pg_description pg_enum pg_event_trigger pg_extension
pg_foreign_data_wrapper pg_foreign_server pg_foreign_table pg_index pg_indexes pg_inherits
pg_init_privs pg_language pg_largeobject_metadata pg_locks pg_matviews pg_namespace pg_opclass
pg_operator pg_opfamily pg_partitioned_table pg_policy pg_prepared_xacts pg_proc pg_publication
pg_publication_namespace pg_publication_rel pg_range pg_rewrite pg_roles pg_sequence
pg_sequences pg_settings pg_shdescription pg_stat_activity pg_stat_all_tables
pg_stat_user_tables pg_stat_all_indexes pg_stat_user_indexes pg_stat_database
pg_statio_all_tables pg_statio_user_tables pg_statistic_ext pg_subscription pg_tables
pg_tablespace pg_trigger pg_ts_config pg_ts_dict pg_ts_parser pg_ts_template pg_type pg_user
pg_views pg_timezone_names pg_timezone_abbrevs pg_shadow pg_group pg_transform pg_seclabel
pg_shseclabel pg_user_mapping pg_user_mappings pg_stat_replication pg_replication_slots
pg_prepared_statements pg_cursors pg_available_extension_versions pg_policies pg_rules
pg_db_role_setting pg_stat_ssl
""".split()

INFORMATION_SCHEMA_RELATIONS = """
tables columns views schemata key_column_usage table_constraints routines parameters
referential_constraints constraint_column_usage constraint_table_usage check_constraints
sequences triggers character_sets table_privileges column_privileges role_table_grants
enabled_roles applicable_roles domains element_types attributes user_defined_types
collations information_schema_catalog_name usage_privileges view_table_usage
view_column_usage foreign_tables foreign_servers foreign_data_wrappers
""".split()

# information_schema domains -> their base types
DOMAINS = {
    "sql_identifier": "name",
    "character_data": "varchar",
    "cardinal_number": "int4",
    "yes_or_no": "varchar",
    "time_stamp": "timestamptz",
}

# pg_type rows: the types sql/types.py knows plus the catalog-internal ones.
TYPES = """
bool bytea char name int8 int2 int2vector int4 regproc text oid tid xid cid oidvector json
pg_node_tree float4 float8 unknown bpchar varchar date time timestamp timestamptz interval
numeric regclass regtype uuid jsonb regnamespace regrole regprocedure regoper regoperator
regcollation regconfig regdictionary aclitem inet pg_lsn xid8 record void cstring any anyarray
anyelement anynonarray anyenum internal trigger event_trigger language_handler
""".split()

# Functions whose pg_proc rows are served besides the types' I/O functions.
FUNCTIONS = """
version format_type pg_get_userbyid pg_get_expr pg_get_indexdef pg_get_constraintdef
pg_get_viewdef pg_table_is_visible pg_type_is_visible pg_function_is_visible obj_description
col_description shobj_description current_schema current_schemas current_database
current_setting set_config has_table_privilege has_schema_privilege has_database_privilege
has_column_privilege has_any_column_privilege has_function_privilege pg_has_role
pg_get_keywords pg_backend_pid pg_postmaster_start_time quote_ident array_lower array_upper
array_length string_to_array generate_series generate_subscripts unnest pg_encoding_to_char
pg_advisory_unlock_all pg_is_in_recovery pg_relation_size pg_total_relation_size
pg_table_size pg_indexes_size pg_size_pretty pg_get_function_result
pg_get_function_arguments pg_get_function_identity_arguments to_regclass to_regtype
pg_typeof pg_get_serial_sequence pg_my_temp_schema pg_is_other_temp_schema
array_to_string pg_get_partkeydef pg_get_ruledef pg_get_triggerdef pg_get_functiondef
""".split()


def canonical_type(typname: str) -> str:
    """Our SqlType name for a Postgres type name."""
    return DOMAINS.get(typname, typname)


def main(dsn: str) -> None:
    import psycopg

    con = psycopg.connect(dsn, autocommit=True)
    cur = con.cursor()

    def rows(sql: str, *params: object) -> list[tuple]:
        cur.execute(sql, params or None)
        return cur.fetchall()

    relations: dict[str, dict[str, tuple]] = {}
    for schema, names in (("pg_catalog", PG_CATALOG_RELATIONS), ("information_schema", INFORMATION_SCHEMA_RELATIONS)):
        out: dict[str, tuple] = {}
        for name in dict.fromkeys(names):
            found = rows(
                "SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relname = %s", schema, name)
            if not found:
                print(f"warning: {schema}.{name} not in this server", file=sys.stderr)
                continue
            oid, kind = found[0]
            cols = rows(
                "SELECT a.attname, t.typname, a.atttypmod, a.attnotnull FROM pg_attribute a "
                "JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = %s AND a.attnum > 0 "
                "AND NOT a.attisdropped ORDER BY a.attnum", oid)
            out[name] = (oid, kind, [(n, canonical_type(t), m, nn) for n, t, m, nn in cols])
        relations[schema] = out

    type_cols = [r[0] for r in rows(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'pg_type'::regclass AND attnum > 0 ORDER BY attnum")]
    base = rows(
        "SELECT oid FROM pg_type WHERE typnamespace = 11 AND typname = ANY(%s)", TYPES)
    base_oids = [r[0] for r in base]
    arrays = rows("SELECT typarray FROM pg_type WHERE oid = ANY(%s) AND typarray <> 0", base_oids)
    all_oids = sorted(set(base_oids) | {r[0] for r in arrays})
    sel = ", ".join(
        f"{c}::oid::int8" if c in ("typinput", "typoutput", "typreceive", "typsend", "typmodin",
                                   "typmodout", "typanalyze", "typsubscript") else
        (f"{c}::text" if c in ("typacl", "typdefaultbin") else c)
        for c in type_cols)
    type_rows = rows(f"SELECT {sel} FROM pg_type WHERE oid = ANY(%s) ORDER BY oid", all_oids)
    types = [dict(zip(type_cols, r, strict=True)) for r in type_rows]

    proc_cols = [r[0] for r in rows(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'pg_proc'::regclass AND attnum > 0 ORDER BY attnum")]
    io_oids = sorted({t[k] for t in types for k in ("typinput", "typoutput", "typreceive", "typsend",
                                                   "typmodin", "typmodout", "typanalyze", "typsubscript") if t[k]})
    psel = ", ".join(
        f"{c}::oid::int8" if c == "prosupport" else
        (f"{c}::int8[]" if c in ("proargtypes", "proallargtypes") else
         (f"{c}::text" if c in ("proargdefaults", "prosqlbody", "proacl") else c))
        for c in proc_cols)
    proc_rows = rows(
        f"SELECT {psel} FROM pg_proc WHERE oid = ANY(%s) OR (pronamespace = 11 AND proname = ANY(%s)) ORDER BY oid",
        io_oids, FUNCTIONS)
    procs = [dict(zip(proc_cols, r, strict=True)) for r in proc_rows]
    proc_sigs = {r[0]: (r[1], r[2], r[3]) for r in rows(
        "SELECT oid::int8, pg_get_function_result(oid), pg_get_function_arguments(oid), "
        "pg_get_function_identity_arguments(oid) FROM pg_proc WHERE oid = ANY(%s)",
        [p["oid"] for p in procs])}

    def table(sql: str) -> tuple[list[str], list[tuple]]:
        cur.execute(sql)
        return [d.name for d in cur.description], cur.fetchall()

    data = {
        "RELATIONS": relations,
        "TYPES": (type_cols, type_rows),
        "PROCS": (proc_cols, proc_rows),
        "PROC_SIGNATURES": proc_sigs,
        "AM": table("SELECT oid::int8, amname, amhandler::oid::int8 AS amhandler, amtype FROM pg_am ORDER BY oid"),
        "COLLATIONS": table(
            "SELECT oid::int8, collname, collnamespace::int8, collowner::int8, collprovider, "
            "collisdeterministic, collencoding, collcollate, collctype, colliculocale, collversion "
            "FROM pg_collation WHERE collname IN ('default', 'C', 'POSIX') ORDER BY oid"),
        "LANGUAGES": table(
            "SELECT oid::int8, lanname, lanowner::int8, lanispl, lanpltrusted, lanplcallfoid::int8, "
            "laninline::int8, lanvalidator::int8, lanacl::text FROM pg_language ORDER BY oid"),
        "KEYWORDS": table("SELECT word, catcode, barelabel, catdesc, baredesc FROM pg_get_keywords()"),
        "SETTINGS": table(
            "SELECT name, setting, unit, category, short_desc, extra_desc, context, vartype, "
            "source, min_val, max_val, enumvals::text, boot_val, reset_val FROM pg_settings "
            "WHERE category <> 'File Locations' AND setting NOT LIKE '/%%' AND name NOT LIKE '%%directory%%' "
            "ORDER BY name"),
    }
    out = Path(__file__).with_name("pg15_data.py")
    with open(out, "w") as f:
        f.write('"""Reference data extracted from PostgreSQL 15 by `gen_pg15.py` (generated; do not edit)."""\n\n')
        f.write("# ruff: noqa: E501\n")
        f.write("# fmt: off\n")
        f.write(f"SERVER_VERSION = {rows('SHOW server_version')[0][0]!r}\n\n")
        for k, v in data.items():
            f.write(f"{k} = {pprint.pformat(v, width=120, compact=True)}\n\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "host=127.0.0.1 port=55432 user=materialize dbname=postgres")
