"""DDL for the coordinator: CREATE/DROP TABLE, VIEW, MATERIALIZED VIEW, INDEX, CREATE TABLE AS,
and sessions' temporary items."""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from catalog.catalog import Catalog, Column, Item
from compute.plan import pipeline
from server.api import CommandResult, Result
from server.compute import Compute
from server.group_commit import WriteLock
from server.resolver import Resolver
from server.session import Session
from server.temp import creation_schema, is_temp_name, temp_schema
from sql import statements as st
from sql.bind import Binder, Scope, ScopeColumn, sql_type_of
from sql.errors import (
    DUPLICATE_COLUMN,
    SYNTAX_ERROR,
    UNDEFINED_SCHEMA,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
    unsupported,
)
from sql.parse import parse_sql
from sql.scalar import Column as ColRef
from sql.temporal import check_maintainable
from sql.types import TEXT


class DdlMixin:
    """The Coordinator's catalog changes (mixed into server.coordinator.Coordinator)."""

    catalog: Catalog
    compute: Compute
    system: Any
    write_lock: WriteLock
    controller: Any
    _monotonic_sources: Any  # server.sources.SourcesMixin

    def _drop_temp_items(self, session: Session) -> None:
        """A session's temporary items (its mz_temp schema) end with it."""
        schema = temp_schema(session.pid)
        if self.catalog.schema_exists(schema):
            with self.write_lock:
                dropped = self.catalog.drop_schema(schema, if_exists=True, cascade=True)
            self.compute.drop_cached([it.shard_id for it in dropped if it.shard_id])
            self._dropped_maintained()

    def _new_name(self, session: Session, parts: tuple[str, ...], temporary: bool = False) -> tuple[str, str]:
        if len(parts) == 3 and parts[0] != "materialize":
            raise SqlError("3D000", f'database "{parts[0]}" does not exist')
        temp = creation_schema(session.pid, parts, temporary)
        if temp is not None:
            self.catalog.create_schema(temp[0], if_not_exists=True)
            return temp[0], parts[-1]
        # the temp schema never takes a new item by being on search_path (as in Postgres)
        schema = parts[-2] if len(parts) >= 2 else ([p for p in session.search_path() if not is_temp_name(p)] or ["public"])[0]
        if not self.catalog.schema_exists(schema):
            raise SqlError(UNDEFINED_SCHEMA, f"unknown schema '{schema}'")
        return schema, parts[-1]

    def _check_cluster(self, cluster: str | None) -> None:
        if cluster is not None and cluster != "quickstart":
            raise SqlError("42704", f"unknown cluster '{cluster}'")

    def _create_view(self, session: Session, s: st.CreateView) -> Result:
        self._check_cluster(s.cluster or (session.get("cluster") if s.materialized else None))
        tag = "CREATE MATERIALIZED VIEW" if s.materialized else "CREATE VIEW"
        b = Binder(Resolver(self.catalog, session, self.system))
        bound = b.bind_query(s.query, top=False)
        if b.params:
            raise SqlError("42P02", "there is no parameter $1")
        if s.materialized:  # now() never, mz_now() only in temporal filters (sql/temporal.py)
            check_maintainable(pipeline.to_mir_rel(b._finish_nested(bound)))
        temporary = s.temporary or self._reads_temp(b.dependencies)
        if temporary and s.materialized:
            raise unsupported("materialized views that read temporary items")
        if temporary and not s.temporary and creation_schema(session.pid, s.name, False) is None:
            if len(s.name) >= 2:
                raise SqlError("42P16", "cannot create temporary relation in non-temporary schema")
            session.notice(f'view "{s.name[-1]}" will be a temporary view')
        schema, name = self._new_name(session, s.name, temporary)
        existing = self.catalog.get_item(schema, name)
        if existing is not None and s.if_not_exists:
            session.notice(f'{"materialized view" if s.materialized else "view"} "{name}" already exists, skipping', "42P07")
            return CommandResult(tag)
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
            self._dropped_maintained()
        item = self.catalog.create_item(schema=schema, name=name, kind=kind, create_sql=s.sql, columns=cols,
                                        depends_on=tuple(b.dependencies), with_shard=s.materialized)
        if s.materialized:
            self._install(item, session)
        return CommandResult(tag)

    def _maintained_dataflow(self, item: Item, session: Session | None = None):
        """The maintained dataflow of an index or materialized view (as EXPLAIN shows it):
        a view's definition, or an index's object arranged by its keys."""
        from compute.plan import pipeline

        resolver = Resolver(self.catalog, session or Session("mz_system", "materialize", {}), self.system)
        stmt = st.classify(item.create_sql)
        if item.kind == "index":
            assert isinstance(stmt, st.CreateIndex)
            on, keys, _ = self._index_parts(resolver, stmt)
            m = pipeline.arrange_by(self._object_mir(resolver, on), keys)  # type: ignore[attr-defined]
        else:
            m = pipeline.to_mir_rel(resolver.view_hir(item))
        return pipeline.dataflow(pipeline.optimize(m, monotonic_sources=self._monotonic_sources()), None,
                                 name=item.qualified_name, single_time=False)

    def _install(self, item: Item, session: Session) -> None:
        """Plan (errors such as 0A000 undo the CREATE) and, with compute running, install and
        hydrate the new object's dataflow before CREATE returns."""
        try:
            df = self._maintained_dataflow(item, session)
            if self.controller is not None:
                self.controller.install(item, df)
        except BaseException:
            with self.write_lock:
                self.catalog.drop_items([item.id])
            if self.controller is not None:
                self.controller.sync()
            raise

    def _dropped_maintained(self) -> None:
        if self.controller is not None:
            self.controller.sync()
        if getattr(self, "generators", None) is not None:
            self.generators.sync()  # type: ignore[attr-defined]

    def _reads_temp(self, ids) -> bool:
        return any((it := self.catalog.get_item_by_id(i)) is not None and it.temporary for i in ids)

    def _index_parts(self, resolver: Resolver, s: st.CreateIndex) -> tuple[Item, tuple, tuple[str, ...]]:
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
            keys = tuple(b.scalar(parse_sql(f"SELECT {k}").expressions[0], scope) for k in s.keys)
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
        self._check_cluster(s.cluster or session.get("cluster"))
        resolver = Resolver(self.catalog, session, self.system)
        on, keys, texts = self._index_parts(resolver, s)
        if on.kind == "view":  # an indexed view is maintained: as a materialized view's definition
            check_maintainable(pipeline.to_mir_rel(resolver.view_hir(on)))
        name = s.name or self._index_name(on, s)
        if self.catalog.get_item(on.schema, name) is not None and s.if_not_exists:
            session.notice(f'index "{name}" already exists, skipping', "42P07")
            return CommandResult("CREATE INDEX")
        del keys
        item = self.catalog.create_item(schema=on.schema, name=name, kind="index", create_sql=s.sql, columns=(),
                                        depends_on=(on.id,), with_shard=False, on_id=on.id, index_keys=texts)
        self._install(item, session)
        return CommandResult("CREATE INDEX")

    def _create_table(self, session: Session, stmt: st.CreateTable) -> Result:
        ast = stmt.ast
        schema_node = ast.this
        table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
        parts = [p.name for p in table.parts]
        props = list(ast.args["properties"].expressions) if ast.args.get("properties") is not None else []
        with_data = True
        temporary = False
        for prop in props:
            if isinstance(prop, exp.WithDataProperty) and ast.expression is not None:
                with_data = not prop.args.get("no")
            elif isinstance(prop, exp.TemporaryProperty):
                temporary = True
            elif isinstance(prop, exp.OnCommitProperty) and not prop.args.get("delete"):
                pass  # ON COMMIT PRESERVE ROWS: the default
            else:
                raise unsupported(f"CREATE TABLE ... {prop.sql(dialect='postgres')}")
        schema, name = self._new_name(session, tuple(parts), temporary)
        if ast.args.get("exists") and self.catalog.get_item(schema, name) is not None:
            session.notice(f'relation "{name}" already exists, skipping', "42P07")
            return CommandResult("CREATE TABLE")
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
        b = Binder(Resolver(self.catalog, session, self.system))
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
        b = Binder(Resolver(self.catalog, session, self.system))
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
        wb = Binder(Resolver(self.catalog, session, self.system))
        extra = self._plan_write(wb, ins, session)
        res = self._write(session, ins, extra, [], wb.param_types())
        n = res.tag.split()[-1] if isinstance(res, CommandResult) else "0"
        return CommandResult(f"SELECT {n}")

    def _drop(self, session: Session, stmt: st.DropObjects) -> Result:
        kind = {"table": "table", "view": "view", "materialized view": "materialized-view", "index": "index", "source": "source"}[stmt.kind]
        resolver = Resolver(self.catalog, session, self.system)
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
            self._dropped_maintained()
        tag = {"table": "DROP TABLE", "view": "DROP VIEW", "materialized-view": "DROP MATERIALIZED VIEW", "index": "DROP INDEX", "source": "DROP SOURCE"}[kind]
        return CommandResult(tag)
