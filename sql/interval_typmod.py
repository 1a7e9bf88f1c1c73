"""Interval typmods (INTERVAL_TYPMOD: field range, seconds precision) and their format_type() text."""

from __future__ import annotations

from sql.errors import SqlError

# ---- typmods: INTERVAL_TYPMOD(precision, range) -----------------------------------------
# field bits of the range (datetime.h)
MONTH, YEAR, DAY, HOUR, MINUTE, SECOND = 1, 2, 3, 10, 11, 12
FULL_RANGE = 0x7FFF
FULL_PRECISION = 0xFFFF
FIELD_BITS = {"YEAR": YEAR, "MONTH": MONTH, "DAY": DAY, "HOUR": HOUR, "MINUTE": MINUTE, "SECOND": SECOND}


def field_mask(*fields: int) -> int:
    """The bit mask of datetime fields (datetime.h's INTERVAL_MASK)."""
    m = 0
    for f in fields:
        m |= 1 << f
    return m


# the qualifiers SQL allows: (first, last) -> range mask
QUALIFIERS = {
    ("YEAR", None): field_mask(YEAR), ("MONTH", None): field_mask(MONTH), ("DAY", None): field_mask(DAY),
    ("HOUR", None): field_mask(HOUR), ("MINUTE", None): field_mask(MINUTE), ("SECOND", None): field_mask(SECOND),
    ("YEAR", "MONTH"): field_mask(YEAR, MONTH), ("DAY", "HOUR"): field_mask(DAY, HOUR),
    ("DAY", "MINUTE"): field_mask(DAY, HOUR, MINUTE), ("DAY", "SECOND"): field_mask(DAY, HOUR, MINUTE, SECOND),
    ("HOUR", "MINUTE"): field_mask(HOUR, MINUTE), ("HOUR", "SECOND"): field_mask(HOUR, MINUTE, SECOND),
    ("MINUTE", "SECOND"): field_mask(MINUTE, SECOND),
}


def interval_typmod(first: str | None = None, last: str | None = None, precision: int | None = None) -> int:
    """The typmod of `interval [first [TO last]] [(precision)]` (-1: plain interval)."""
    if first is None and precision is None:
        return -1
    rng = FULL_RANGE if first is None else QUALIFIERS.get((first.upper(), last.upper() if last else None))
    if rng is None:
        raise SqlError("42601", f"invalid interval qualifier {first} TO {last}")
    if precision is not None and not 0 <= precision <= 6:
        if precision < 0:
            raise SqlError("22023", f"INTERVAL({precision}) precision must not be negative")
        precision = 6  # Postgres reduces it to the maximum, with a warning
    return (rng << 16) | (FULL_PRECISION if precision is None else precision)


def typmod_range(typmod: int) -> int:
    return FULL_RANGE if typmod < 0 else (typmod >> 16) & 0x7FFF


def typmod_precision(typmod: int) -> int:
    return FULL_PRECISION if typmod < 0 else typmod & 0xFFFF


def format_typmod(typmod: int) -> str:
    """The ` day to second(3)` suffix format_type() prints for an interval typmod."""
    if typmod < 0:
        return ""
    rng, prec = typmod_range(typmod), typmod_precision(typmod)
    names = {v: k for k, v in QUALIFIERS.items()}
    out = ""
    if rng != FULL_RANGE and rng in names:
        first, last = names[rng]
        out = f" {first.lower()}" + (f" to {last.lower()}" if last else "")
    if prec != FULL_PRECISION:
        out += f"({prec})"
    return out
