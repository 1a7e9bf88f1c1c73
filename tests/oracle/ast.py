"""A tiny SQL syntax tree: enough structure for the generator to build typed queries and for
the minimizer to shrink them without knowing SQL.

A node is either a template (`fmt` with `{0}`, `{1}` … for its children), a list (children
joined by `sep`, at least `min_len` of them kept), or an optional clause (rendered as its only
child, or dropped). Expression nodes carry their SQL type so the minimizer replaces an
expression only by another of the same type.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class N:
    fmt: str = "{0}"
    kids: tuple[N, ...] = ()
    ty: str | None = None          # SQL type of an expression node
    kind: str = "tmpl"             # "tmpl" | "list" | "opt" | "leaf"
    sep: str = ", "
    min_len: int = 1

    def render(self) -> str:
        match self.kind:
            case "leaf":
                return self.fmt
            case "list":
                return self.sep.join(k.render() for k in self.kids)
            case "opt":
                return self.fmt.format(*(k.render() for k in self.kids)) if self.kids else ""
            case _:
                return self.fmt.format(*(k.render() for k in self.kids))


def leaf(text: str, ty: str | None = None) -> N:
    return N(fmt=text, ty=ty, kind="leaf")


def t(fmt: str, *kids: N, ty: str | None = None) -> N:
    return N(fmt=fmt, kids=tuple(kids), ty=ty)


def lst(kids: list[N] | tuple[N, ...], sep: str = ", ", min_len: int = 1) -> N:
    return N(kids=tuple(kids), kind="list", sep=sep, min_len=min_len)


def opt(fmt: str, kid: N | None) -> N:
    """An optional clause: `fmt` around `kid`, or nothing."""
    return N(fmt=fmt, kids=(kid,) if kid is not None else (), kind="opt")


Path = tuple[int, ...]


def walk(n: N, path: Path = ()) -> Iterator[tuple[Path, N]]:
    yield path, n
    for i, k in enumerate(n.kids):
        yield from walk(k, (*path, i))


def at(n: N, path: Path) -> N:
    for i in path:
        n = n.kids[i]
    return n


def replace_at(n: N, path: Path, new: N | None) -> N:
    """`n` with the node at `path` replaced by `new` (None removes it from its parent)."""
    if not path:
        assert new is not None
        return new
    i, rest = path[0], path[1:]
    if not rest:
        kids = n.kids[:i] + ((new,) if new is not None else ()) + n.kids[i + 1:]
    else:
        kids = n.kids[:i] + (replace_at(n.kids[i], rest, new),) + n.kids[i + 1:]
    return replace(n, kids=kids)


def size(n: N) -> int:
    return 1 + sum(size(k) for k in n.kids)
