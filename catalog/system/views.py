"""DuckDB definitions of the derived system relations and of the catalog functions.

Placeholders: {MZSYS} the system database, {FN} macros, {STATIC}/{SNAP}/{STATE} the
storage schemas. Each derived view's SELECT names (a subset of) the relation's columns;
`db.py` wraps it in a projection casting every declared column to its storage type (NULL
for the ones not named here).
"""

from __future__ import annotations

PG = "{MZSYS}.pg"
INFO = "{MZSYS}.info"
MZC = "{MZSYS}.mzc"

SYSTEM_SCHEMA_LIST = "('pg_catalog', 'information_schema', 'mz_catalog', 'mz_internal')"

MACROS: list[str] = [
    # format_type / regtype output: Python functions registered by db.py (Postgres' rules)
    """CREATE MACRO {FN}.format_type(t, m) AS mzsys_format_type(t, m)""",
    """CREATE MACRO {FN}.parse_ident(s, strict) AS mzsys_parse_ident(s, strict)""",
    """CREATE MACRO {FN}.truncate_name(s) AS mzsys_truncate_name(s)""",
    """CREATE MACRO {FN}.truncate_names(s) AS mzsys_truncate_names(s)""",
    """CREATE MACRO {FN}.pg_table_is_visible(o, spkey) AS coalesce((
        SELECT _mv.visible FROM {SNAP}.visible _mv WHERE _mv.sp = spkey AND _mv.oid = o), false)""",
    """CREATE MACRO {FN}.pg_type_is_visible(o, sp) AS coalesce((
        SELECT list_position(sp, _mn.nspname) IS NOT NULL FROM {PG}.pg_type _mt
        JOIN {PG}.pg_namespace _mn ON _mn.oid = _mt.typnamespace WHERE _mt.oid = o), false)""",
    """CREATE MACRO {FN}.pg_function_is_visible(o, sp) AS coalesce((
        SELECT list_position(sp, _mn.nspname) IS NOT NULL FROM {PG}.pg_proc _mp
        JOIN {PG}.pg_namespace _mn ON _mn.oid = _mp.pronamespace WHERE _mp.oid = o), false)""",
    """CREATE MACRO {FN}.pg_collation_is_visible(o, sp) AS coalesce((
        SELECT list_position(sp, _mn.nspname) IS NOT NULL FROM {PG}.pg_collation _mc
        JOIN {PG}.pg_namespace _mn ON _mn.oid = _mc.collnamespace WHERE _mc.oid = o), false)""",
    """CREATE MACRO {FN}.quote_ident(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*') AND NOT {FN}.is_reserved(s) THEN s
        ELSE '"' || replace(s, '"', '""') || '"' END""",
    # quote_literal is strict; a value holding a backslash becomes an E'' literal, backslashes doubled
    """CREATE MACRO {FN}.quote_literal(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN contains(s, chr(92)) THEN 'E' || chr(39) || replace(replace(s, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39)) || chr(39)
        ELSE chr(39) || replace(s, chr(39), chr(39) || chr(39)) || chr(39) END""",
    """CREATE MACRO {FN}.quote_nullable(s) AS coalesce({FN}.quote_literal(s), 'NULL')""",
    # reg* output (text form) and input (from text that is not a literal)
    """CREATE MACRO {FN}.regclass_out(o, spkey) AS CASE WHEN o IS NULL THEN NULL ELSE coalesce((
        SELECT _mv.name FROM {SNAP}.visible _mv WHERE _mv.sp = spkey AND _mv.oid = o), o::VARCHAR) END""",
    """CREATE MACRO {FN}.regtype_out(o) AS mzsys_regtype_out(o)""",
    """CREATE MACRO {FN}.regproc_out(o) AS CASE WHEN o IS NULL THEN NULL WHEN o = 0 THEN '-'
        ELSE coalesce((SELECT _mp.proname FROM {PG}.pg_proc _mp WHERE _mp.oid = o), o::VARCHAR) END""",
    """CREATE MACRO {FN}.regnamespace_out(o) AS CASE WHEN o IS NULL THEN NULL
        ELSE coalesce((SELECT _mn.nspname FROM {PG}.pg_namespace _mn WHERE _mn.oid = o), o::VARCHAR) END""",
    """CREATE MACRO {FN}.ident_part(s) AS CASE WHEN starts_with(trim(s), '"')
        THEN replace(trim(trim(s), '"'), '""', '"') ELSE lower(trim(s)) END""",
    """CREATE MACRO {FN}.regclass_in(s, sp) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(trim(s), '[0-9]+') THEN trim(s)::UINTEGER ELSE (
        SELECT _mc.oid FROM {PG}.pg_class _mc JOIN {PG}.pg_namespace _mn ON _mn.oid = _mc.relnamespace
        WHERE CASE WHEN contains(s, '.')
                   THEN _mn.nspname = {FN}.ident_part(split_part(s, '.', 1)) AND _mc.relname = {FN}.ident_part(split_part(s, '.', 2))
                   ELSE _mc.relname = {FN}.ident_part(s) AND list_position(sp, _mn.nspname) IS NOT NULL END
        ORDER BY list_position(sp, _mn.nspname) LIMIT 1) END""",
    """CREATE MACRO {FN}.regtype_in(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(trim(s), '[0-9]+') THEN trim(s)::UINTEGER ELSE coalesce(
        (SELECT _mt.oid FROM {PG}.pg_type _mt WHERE _mt.typname = {FN}.ident_part(s) ORDER BY _mt.oid LIMIT 1),
        (SELECT _mn.oid FROM {STATIC}.type_names _mn WHERE _mn.name = lower(trim(s)) ORDER BY _mn.oid LIMIT 1)) END""",
    """CREATE MACRO {FN}.regnamespace_in(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(trim(s), '[0-9]+') THEN trim(s)::UINTEGER ELSE
        (SELECT _mn.oid FROM {PG}.pg_namespace _mn WHERE _mn.nspname = {FN}.ident_part(s)) END""",
    """CREATE MACRO {FN}.regproc_in(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(trim(s), '[0-9]+') THEN trim(s)::UINTEGER ELSE
        (SELECT _mp.oid FROM {PG}.pg_proc _mp WHERE _mp.proname = {FN}.ident_part(s) ORDER BY _mp.oid LIMIT 1) END""",
    """CREATE MACRO {FN}.regrole_in(s) AS CASE WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(trim(s), '[0-9]+') THEN trim(s)::UINTEGER ELSE
        (SELECT _ma.oid FROM {PG}.pg_authid _ma WHERE _ma.rolname = {FN}.ident_part(s)) END""",
    # definitions and descriptions
    """CREATE MACRO {FN}.pg_get_expr(e, r) AS e, (e, r, p) AS e""",
    """CREATE MACRO {FN}.pg_get_indexdef(o) AS (SELECT _md.def FROM {SNAP}.indexdef _md WHERE _md.oid = o AND _md.colno = 0),
        (o, c, p) AS (SELECT _md.def FROM {SNAP}.indexdef _md WHERE _md.oid = o AND _md.colno = c)""",
    """CREATE MACRO {FN}.pg_get_constraintdef(o) AS (SELECT _md.def FROM {SNAP}.constraintdef _md WHERE _md.oid = o),
        (o, p) AS (SELECT _md.def FROM {SNAP}.constraintdef _md WHERE _md.oid = o)""",
    """CREATE MACRO {FN}.pg_get_viewdef(o) AS (SELECT _md.def FROM {SNAP}.viewdef _md WHERE _md.oid = o),
        (o, p) AS (SELECT _md.def FROM {SNAP}.viewdef _md WHERE _md.oid = o)""",
    """CREATE MACRO {FN}.obj_description(o) AS (SELECT _md.description FROM {PG}.pg_description _md
        WHERE _md.objoid = o AND _md.objsubid = 0 LIMIT 1),
        (o, cat) AS (SELECT _md.description FROM {PG}.pg_description _md
        JOIN {PG}.pg_class _mc ON _mc.oid = _md.classoid WHERE _md.objoid = o AND _md.objsubid = 0 AND _mc.relname = cat LIMIT 1)""",
    """CREATE MACRO {FN}.col_description(o, n) AS (SELECT _md.description FROM {PG}.pg_description _md
        WHERE _md.objoid = o AND _md.classoid = 1259 AND _md.objsubid = n LIMIT 1)""",
    """CREATE MACRO {FN}.shobj_description(o, cat) AS (SELECT _md.description FROM {PG}.pg_shdescription _md
        WHERE _md.objoid = o LIMIT 1)""",
    """CREATE MACRO {FN}.pg_get_function_result(o) AS (SELECT _ms.result FROM {STATIC}.proc_signatures _ms WHERE _ms.oid = o)""",
    """CREATE MACRO {FN}.pg_get_function_arguments(o) AS (SELECT _ms.arguments FROM {STATIC}.proc_signatures _ms WHERE _ms.oid = o)""",
    """CREATE MACRO {FN}.pg_get_function_identity_arguments(o) AS (SELECT _ms.identity_arguments FROM {STATIC}.proc_signatures _ms WHERE _ms.oid = o)""",
    """CREATE MACRO {FN}.pg_encoding_to_char(e) AS CASE e WHEN 6 THEN 'UTF8' WHEN 0 THEN 'SQL_ASCII' ELSE '' END""",
    """CREATE MACRO {FN}.pg_char_to_encoding(s) AS CASE upper(s) WHEN 'UTF8' THEN 6 WHEN 'SQL_ASCII' THEN 0 ELSE -1 END""",
    # arrays (Postgres semantics: NULL bounds for empty arrays; vectors are 0-based)
    """CREATE MACRO {FN}.array_lower(a, d) AS CASE WHEN a IS NULL OR len(a) = 0 OR d <> 1 THEN NULL ELSE 1 END""",
    """CREATE MACRO {FN}.array_upper(a, d) AS CASE WHEN a IS NULL OR len(a) = 0 OR d <> 1 THEN NULL ELSE len(a) END""",
    """CREATE MACRO {FN}.vector_lower(a, d) AS CASE WHEN a IS NULL OR len(a) = 0 OR d <> 1 THEN NULL ELSE 0 END""",
    """CREATE MACRO {FN}.vector_upper(a, d) AS CASE WHEN a IS NULL OR len(a) = 0 OR d <> 1 THEN NULL ELSE len(a) - 1 END""",
    """CREATE MACRO {FN}.array_length(a, d) AS CASE WHEN a IS NULL OR len(a) = 0 OR d <> 1 THEN NULL ELSE len(a) END""",
    """CREATE MACRO {FN}.cardinality(a) AS len(a)""",
    # an array's / a vector's text form, as Postgres prints them ({1,2} / "1 2")
    """CREATE MACRO {FN}.array_text(a) AS CASE WHEN a IS NULL THEN NULL ELSE '{{' || array_to_string(list_transform(a,
        lambda x: CASE WHEN x IS NULL THEN 'NULL'
                       WHEN x::VARCHAR = '' OR upper(x::VARCHAR) = 'NULL' OR regexp_matches(x::VARCHAR, '[{{}},"\\\\\\s]')
                       THEN '"' || replace(replace(x::VARCHAR, '\\', '\\\\'), '"', '\\"') || '"'
                       ELSE x::VARCHAR END), ',') || '}}' END""",
    """CREATE MACRO {FN}.vector_text(a) AS array_to_string(a, ' ')""",
    """CREATE MACRO {FN}.expandarray(a) AS list_transform(generate_series(1, len(a)), lambda i: {{'x': a[i], 'n': i}})""",
    """CREATE MACRO {FN}.size_pretty(n) AS CASE WHEN n IS NULL THEN NULL ELSE n::VARCHAR || ' bytes' END""",
]

DERIVED_VIEWS: dict[tuple[str, str], str] = {
    ("pg_catalog", "pg_roles"): f"""
        SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication,
               rolconnlimit, '********' AS rolpassword, rolvaliduntil, rolbypassrls, oid
        FROM {PG}.pg_authid""",
    ("pg_catalog", "pg_user"): f"""
        SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb, rolsuper AS usesuper,
               rolreplication AS userepl, rolbypassrls AS usebypassrls, '********' AS passwd,
               rolvaliduntil AS valuntil
        FROM {PG}.pg_authid WHERE rolcanlogin""",
    ("pg_catalog", "pg_shadow"): f"""
        SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb, rolsuper AS usesuper,
               rolreplication AS userepl, rolbypassrls AS usebypassrls, rolvaliduntil AS valuntil
        FROM {PG}.pg_authid WHERE rolcanlogin""",
    ("pg_catalog", "pg_group"): f"""
        SELECT rolname AS groname, oid AS grosysid, []::UINTEGER[] AS grolist FROM {PG}.pg_authid WHERE NOT rolcanlogin""",
    ("pg_catalog", "pg_tables"): f"""
        SELECT n.nspname AS schemaname, c.relname AS tablename, {{FN}}.pg_get_userbyid(c.relowner) AS tableowner,
               c.relhasindex AS hasindexes, c.relhasrules AS hasrules, c.relhastriggers AS hastriggers,
               c.relrowsecurity AS rowsecurity
        FROM {PG}.pg_class c LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p')""",
    ("pg_catalog", "pg_views"): f"""
        SELECT n.nspname AS schemaname, c.relname AS viewname, {{FN}}.pg_get_userbyid(c.relowner) AS viewowner,
               {{FN}}.pg_get_viewdef(c.oid) AS definition
        FROM {PG}.pg_class c LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'v'""",
    ("pg_catalog", "pg_matviews"): f"""
        SELECT n.nspname AS schemaname, c.relname AS matviewname, {{FN}}.pg_get_userbyid(c.relowner) AS matviewowner,
               c.relhasindex AS hasindexes, c.relispopulated AS ispopulated, {{FN}}.pg_get_viewdef(c.oid) AS definition
        FROM {PG}.pg_class c LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'm'""",
    ("pg_catalog", "pg_indexes"): f"""
        SELECT n.nspname AS schemaname, c.relname AS tablename, i.relname AS indexname,
               {{FN}}.pg_get_indexdef(i.oid) AS indexdef
        FROM {PG}.pg_index x JOIN {PG}.pg_class c ON c.oid = x.indrelid JOIN {PG}.pg_class i ON i.oid = x.indexrelid
        LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'm', 'p') AND i.relkind IN ('i', 'I')""",
    ("pg_catalog", "pg_stat_all_tables"): f"""
        SELECT c.oid AS relid, n.nspname AS schemaname, c.relname AS relname, 0 AS seq_scan, 0 AS seq_tup_read,
               0 AS idx_scan, 0 AS idx_tup_fetch, 0 AS n_tup_ins, 0 AS n_tup_upd, 0 AS n_tup_del,
               0 AS n_tup_hot_upd, 0 AS n_live_tup, 0 AS n_dead_tup, 0 AS n_mod_since_analyze,
               0 AS n_ins_since_vacuum, 0 AS vacuum_count, 0 AS autovacuum_count, 0 AS analyze_count,
               0 AS autoanalyze_count
        FROM {PG}.pg_class c LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'm', 'p')""",
    ("pg_catalog", "pg_stat_user_tables"): f"""
        SELECT * FROM {PG}.pg_stat_all_tables WHERE schemaname NOT IN {SYSTEM_SCHEMA_LIST}""",
    ("pg_catalog", "pg_statio_all_tables"): f"""
        SELECT c.oid AS relid, n.nspname AS schemaname, c.relname AS relname, 0 AS heap_blks_read,
               0 AS heap_blks_hit, 0 AS idx_blks_read, 0 AS idx_blks_hit
        FROM {PG}.pg_class c LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'm', 'p')""",
    ("pg_catalog", "pg_statio_user_tables"): f"""
        SELECT * FROM {PG}.pg_statio_all_tables WHERE schemaname NOT IN {SYSTEM_SCHEMA_LIST}""",
    ("pg_catalog", "pg_stat_all_indexes"): f"""
        SELECT c.oid AS relid, i.oid AS indexrelid, n.nspname AS schemaname, c.relname AS relname,
               i.relname AS indexrelname, 0 AS idx_scan, 0 AS idx_tup_read, 0 AS idx_tup_fetch
        FROM {PG}.pg_index x JOIN {PG}.pg_class c ON c.oid = x.indrelid JOIN {PG}.pg_class i ON i.oid = x.indexrelid
        LEFT JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace""",
    ("pg_catalog", "pg_stat_user_indexes"): f"""
        SELECT * FROM {PG}.pg_stat_all_indexes WHERE schemaname NOT IN {SYSTEM_SCHEMA_LIST}""",
    ("pg_catalog", "pg_stat_database"): f"""
        SELECT oid AS datid, datname, 0 AS numbackends, 0 AS xact_commit, 0 AS xact_rollback
        FROM {PG}.pg_database""",
    # information_schema
    ("information_schema", "information_schema_catalog_name"): "SELECT 'materialize' AS catalog_name",
    ("information_schema", "schemata"): f"""
        SELECT 'materialize' AS catalog_name, nspname AS schema_name, {{FN}}.pg_get_userbyid(nspowner) AS schema_owner
        FROM {PG}.pg_namespace""",
    ("information_schema", "tables"): f"""
        SELECT 'materialize' AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
               CASE c.relkind WHEN 'r' THEN 'BASE TABLE' WHEN 'p' THEN 'BASE TABLE' WHEN 'v' THEN 'VIEW'
                              WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN' END AS table_type,
               CASE WHEN c.relkind IN ('r', 'p') AND n.nspname NOT IN {SYSTEM_SCHEMA_LIST} THEN 'YES' ELSE 'NO' END
                   AS is_insertable_into,
               'NO' AS is_typed
        FROM {PG}.pg_class c JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')""",
    ("information_schema", "views"): f"""
        SELECT 'materialize' AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
               {{FN}}.pg_get_viewdef(c.oid) AS view_definition, 'NONE' AS check_option, 'NO' AS is_updatable,
               'NO' AS is_insertable_into, 'NO' AS is_trigger_updatable, 'NO' AS is_trigger_deletable,
               'NO' AS is_trigger_insertable_into
        FROM {PG}.pg_class c JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v'""",
    ("information_schema", "columns"): f"""
        SELECT 'materialize' AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
               a.attname AS column_name, a.attnum AS ordinal_position, d.adbin AS column_default,
               CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable,
               CASE WHEN t.typcategory = 'A' THEN 'ARRAY' WHEN t.typnamespace = 11 THEN {{FN}}.format_type(t.oid, NULL)
                    ELSE 'USER-DEFINED' END AS data_type,
               CASE WHEN a.atttypid IN (1042, 1043) AND a.atttypmod >= 4 THEN a.atttypmod - 4 END AS character_maximum_length,
               CASE WHEN a.atttypid IN (1042, 1043) AND a.atttypmod >= 4 THEN (a.atttypmod - 4) * 4
                    WHEN a.atttypid IN (25, 1042, 1043) THEN 1073741824 END AS character_octet_length,
               CASE a.atttypid WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64 WHEN 700 THEN 24 WHEN 701 THEN 53
                    WHEN 16462 THEN 64
                    WHEN 1700 THEN CASE WHEN a.atttypmod >= 4 THEN ((a.atttypmod - 4) >> 16) & 65535 END END
                   AS numeric_precision,
               CASE WHEN a.atttypid IN (21, 23, 20, 700, 701, 16462) THEN 2 WHEN a.atttypid = 1700 THEN 10 END
                   AS numeric_precision_radix,
               CASE WHEN a.atttypid IN (21, 23, 20, 16462) THEN 0
                    WHEN a.atttypid = 1700 AND a.atttypmod >= 4 THEN (a.atttypmod - 4) & 65535 END AS numeric_scale,
               CASE WHEN a.atttypid = 1082 THEN 0
                    WHEN a.atttypid IN (1083, 1114, 1184, 1186) THEN CASE WHEN a.atttypmod >= 0 THEN a.atttypmod ELSE 6 END
                   END AS datetime_precision,
               'materialize' AS udt_catalog, tn.nspname AS udt_schema, t.typname AS udt_name,
               a.attnum::VARCHAR AS dtd_identifier, 'NO' AS is_self_referencing, 'NO' AS is_identity,
               'NEVER' AS is_generated,
               CASE WHEN c.relkind IN ('r', 'p') AND n.nspname NOT IN {SYSTEM_SCHEMA_LIST} THEN 'YES' ELSE 'NO' END
                   AS is_updatable
        FROM {PG}.pg_attribute a JOIN {PG}.pg_class c ON c.oid = a.attrelid
        JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN {PG}.pg_type t ON t.oid = a.atttypid LEFT JOIN {PG}.pg_namespace tn ON tn.oid = t.typnamespace
        LEFT JOIN {PG}.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'f')""",
    ("information_schema", "table_constraints"): f"""
        SELECT 'materialize' AS constraint_catalog, n.nspname AS constraint_schema, con.conname AS constraint_name,
               'materialize' AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
               CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' WHEN 'f' THEN 'FOREIGN KEY'
                                WHEN 'c' THEN 'CHECK' END AS constraint_type,
               'NO' AS is_deferrable, 'NO' AS initially_deferred, 'YES' AS enforced
        FROM {PG}.pg_constraint con JOIN {PG}.pg_class c ON c.oid = con.conrelid
        JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace""",
    ("information_schema", "key_column_usage"): f"""
        SELECT 'materialize' AS constraint_catalog, n.nspname AS constraint_schema, k.conname AS constraint_name,
               'materialize' AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
               a.attname AS column_name, k.pos AS ordinal_position
        FROM (SELECT con.conname, con.conrelid, con.contype, con.conkey[p] AS attnum, p AS pos
              FROM {PG}.pg_constraint con, generate_series(1, len(con.conkey)) AS g(p)) k
        JOIN {PG}.pg_class c ON c.oid = k.conrelid JOIN {PG}.pg_namespace n ON n.oid = c.relnamespace
        JOIN {PG}.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.attnum
        WHERE k.contype IN ('p', 'u', 'f')""",
    ("information_schema", "constraint_column_usage"): f"""
        SELECT table_catalog, table_schema, table_name, column_name, constraint_catalog, constraint_schema,
               constraint_name FROM {INFO}.key_column_usage""",
    ("information_schema", "constraint_table_usage"): f"""
        SELECT DISTINCT table_catalog, table_schema, table_name, constraint_catalog, constraint_schema,
               constraint_name FROM {INFO}.key_column_usage""",
    ("information_schema", "character_sets"): """
        SELECT 'UTF8' AS character_set_name, 'UCS' AS character_repertoire, 'UTF8' AS form_of_use,
               'materialize' AS default_collate_catalog, 'pg_catalog' AS default_collate_schema,
               'C' AS default_collate_name""",
    ("information_schema", "enabled_roles"): f"SELECT rolname AS role_name FROM {PG}.pg_authid",
    # mz_internal hydration views over the controller's state
    ("mz_internal", "mz_compute_operator_hydration_statuses"): """
        SELECT object_id, plan_node_id, replica_id, bool_and(hydrated) AS hydrated
        FROM {STATE}.mz_compute_operator_hydration_statuses_per_worker
        GROUP BY object_id, plan_node_id, replica_id""",
    ("mz_internal", "mz_compute_hydration_statuses"): f"""
        WITH objs AS (
            SELECT i.id AS object_id, r.id AS replica_id FROM {{SNAP}}.items i, {MZC}.mz_cluster_replicas r
            WHERE i.kind IN ('index', 'materialized-view')
            UNION SELECT object_id, replica_id FROM {{STATE}}.mz_compute_operator_hydration_statuses_per_worker
            UNION SELECT object_id, replica_id FROM {{STATE}}.mz_compute_hydration_times),
        ops AS (
            SELECT object_id, replica_id, bool_and(hydrated) AS h
            FROM {{STATE}}.mz_compute_operator_hydration_statuses_per_worker GROUP BY object_id, replica_id)
        SELECT o.object_id, o.replica_id, coalesce(ops.h, true) AND t.time_ns IS NOT NULL AS hydrated,
               to_microseconds((t.time_ns // 1000)::BIGINT) AS hydration_time
        FROM objs o LEFT JOIN ops ON ops.object_id = o.object_id AND ops.replica_id = o.replica_id
        LEFT JOIN {{STATE}}.mz_compute_hydration_times t ON t.object_id = o.object_id AND t.replica_id = o.replica_id""",
    ("mz_introspection", "mz_lir_mapping"): """
        SELECT * FROM {STATE}.mz_lir_mapping""",
    ("mz_internal", "mz_hydration_statuses"): f"""
        SELECT object_id, replica_id, hydrated FROM {{MZSYS}}.mzi.mz_compute_hydration_statuses
        UNION ALL
        SELECT i.id, r.id, true FROM {{SNAP}}.items i, {MZC}.mz_cluster_replicas r WHERE i.kind = 'source'""",
}
