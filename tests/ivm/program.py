"""One IVM oracle run as data: tables with their initial rows, maintained objects over them and
a sequence of writes; a function of a seed (or of hypothesis' draws). Also renders a
self-contained SQL script that reproduces a run (what a minimized finding prints)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tests.ivm.choose import Chooser, SeededChooser
from tests.ivm.queries import FAMILIES, Def, Prev, random_def
from tests.ivm.schema import create_sql, random_tables
from tests.ivm.writes import Write, random_writes
from tests.oracle.schema import Table

KINDS = ("mv", "view")   # mv: CREATE MATERIALIZED VIEW; view: CREATE VIEW + CREATE DEFAULT INDEX


@dataclass(frozen=True)
class Obj:
    name: str
    kind: str                   # one of KINDS
    d: Def
    index_col: str | None = None  # an extra CREATE INDEX ON view (col)

    @property
    def columns(self) -> str:
        return ", ".join(f"c{i + 1}" for i in range(self.d.ncols))

    def mz_create(self) -> list[str]:
        if self.kind == "mv":
            return [f"CREATE MATERIALIZED VIEW {self.name} ({self.columns}) AS {self.d.sql}"]
        out = [f"CREATE VIEW {self.name} ({self.columns}) AS {self.d.sql}", f"CREATE DEFAULT INDEX ON {self.name}"]
        if self.index_col:
            out.append(f"CREATE INDEX {self.name}_{self.index_col} ON {self.name} ({self.index_col})")
        return out

    def pg_create(self) -> list[str]:
        """PostgreSQL's side: a plain view, so reading it runs the definition on current data."""
        return [] if self.d.pg_sql is None else [f"CREATE VIEW {self.name} ({self.columns}) AS {self.d.pg_sql}"]


@dataclass(frozen=True)
class Program:
    tables: tuple[Table, ...]
    objects: tuple[Obj, ...]
    writes: tuple[Write, ...]
    label: str = ""

    def closure(self, name: str) -> tuple[Obj, ...]:
        """The object `name` and the earlier objects it reads, in creation order."""
        want = {name}
        for o in reversed(self.objects):
            if o.name in want:
                want |= set(o.d.deps)
        return tuple(o for o in self.objects if o.name in want)

    def script(self, upto: int | None = None) -> str:
        """The run as one SQL script for mzspark (a repro)."""
        lines = [s + ";" for s in create_sql(self.tables)]
        for o in self.objects:
            lines += [s + ";" for s in o.mz_create()]
        for w in self.writes[:upto]:
            lines.append(w.sql() + ";")
        lines += [f"SELECT * FROM {o.name};" for o in self.objects]
        return "\n".join(lines)


def generate(c: Chooser, *, objects: int = 4, writes: int = 8, families: tuple[str, ...] = (),
             cover: bool = False, label: str = "") -> Program:
    """`cover`: object i is of family i (mod their number), so every family appears."""
    tables = random_tables(c)
    objs: list[Obj] = []
    prev: list[Prev] = []
    names = families or tuple(FAMILIES)
    for i in range(objects):
        d = random_def(c, tables, prev, (names[i % len(names)],) if cover else families)
        kind = c.choice(KINDS)
        idx = f"c{c.randint(1, d.ncols)}" if kind == "view" and c.chance(0.4) else None
        o = Obj(f"o{i + 1}", kind, d, idx)
        objs.append(o)
        prev.append(Prev(o.name, d.ncols))
    return Program(tables, tuple(objs), random_writes(c, tables, writes), label)


def from_seed(seed: int, **kw) -> Program:  # type: ignore[no-untyped-def]
    return generate(SeededChooser(seed), label=f"seed {seed}", **kw)


def with_rows(p: Program, rows: dict[str, tuple[tuple[str, ...], ...]]) -> Program:
    return replace(p, tables=tuple(replace(t, rows=rows.get(t.name, t.rows)) for t in p.tables))
