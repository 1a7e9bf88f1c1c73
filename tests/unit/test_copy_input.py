"""COPY FROM input: the vectorized (Arrow) paths equal the reference paths value by value.

`catalog.storage.text_input._fast` casts a column with Arrow only when that provably equals
the type's input function field by field (`_slow`, the path INSERT takes for a string
literal); `server.pgwire.copy._arrow_fields` splits a stream with Arrow only when that
equals the row-by-row parser. These properties check both on generated inputs, including
inputs built to sit on the edges (signs, blanks, too many digits, trailing blanks, bad
dates, escapes, quotes, NULL forms).
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.storage.text_input import _fast, _slow, text_column_to_arrow
from server.api import ColumnDesc
from server.pgwire.copy import _arrow_fields, _reference_fields, parse_copy_in
from sql.errors import SqlError
from sql.types import SqlType

TYPES = [
    SqlType("int2"), SqlType("int4"), SqlType("int8"), SqlType("numeric", ((15 << 16) | 2) + 4),
    SqlType("numeric", ((4 << 16) | 4) + 4), SqlType("numeric"), SqlType("float4"), SqlType("float8"),
    SqlType("bool"), SqlType("date"), SqlType("timestamp"), SqlType("text"), SqlType("varchar", 9),
    SqlType("bpchar", 9), SqlType("bpchar", 5),
]

TOKENS = ["0", "1", "-1", "+7", "12", "99999", "32768", "-32769", "2147483648", "9223372036854775807",
          "123456789012345678", "1.5", "12.25", "12.255", "0.005", ".5", "5.", "1e3", "1E-2", "1e999",
          " 3", "3 ", "abc", "", "t", "TRUE", "off", "Yes", "maybe", "1998-12-01", "1992-02-29",
          "1993-02-29", "0000-01-01", "2020-13-01", "98-01-01", "1999-01-08 12:30:00",
          "1999-01-08 24:00:00", "1999-01-08 12:30:00.123456", "ab", "abcde", "abcdef", "abcde  ",
          "üñï", "nan", "Infinity", "-0", "00012", "3.4e38", "3.5e38", "9" * 14 + ".99"]


def _slow_or_error(arr: pa.Array, t: SqlType) -> pa.Array | SqlError:
    try:
        return _slow(arr, t)
    except SqlError as e:
        return e


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TYPES),
       st.lists(st.one_of(st.sampled_from(TOKENS), st.none(), st.text(alphabet="0123456789.-+eE :", max_size=12)),
                min_size=1, max_size=6))
def test_fast_cast_equals_the_input_function(t: SqlType, values: list[str | None]) -> None:
    arr = pa.array(values, pa.string())
    ref = _slow_or_error(arr, t)
    fast = _fast(arr, t)
    if fast is None:
        return
    assert not isinstance(ref, SqlError), (t, values, ref)
    assert fast.to_pylist() == ref.to_pylist(), (t, values)


def test_char_n_is_padded_and_length_checked_like_insert() -> None:
    t = SqlType("bpchar", 9)
    assert text_column_to_arrow(pa.array(["cd", None, "abcde  "], pa.string()), t).to_pylist() == [
        "cd   ", None, "abcde"]
    with pytest.raises(SqlError) as e:
        text_column_to_arrow(pa.array(["abcdef"], pa.string()), t)
    assert e.value.sqlstate == "22001"


def test_fields_arrow_rejects_take_the_input_function() -> None:
    """A field a pattern admits but Arrow's cast rejects falls back instead of failing."""
    assert text_column_to_arrow(pa.array(["+7", "-3"], pa.string()), SqlType("int4")).to_pylist() == [7, -3]
    assert text_column_to_arrow(pa.array(["+1.5"], pa.string()), SqlType("float8")).to_pylist() == [1.5]


def _streams() -> st.SearchStrategy[str]:
    field = st.one_of(st.sampled_from(["a", "b c", "", "\\N", "x\\ty", "a\\\\", '"q"', 'a"b', '"a,b"', '""',
                                       "\\.", "ü", "1,2", '"multi\nline"']), st.text(alphabet="ab,\t\"\\N ", max_size=4))
    row = st.lists(field, min_size=1, max_size=3)
    return st.tuples(st.lists(row, min_size=0, max_size=5), st.sampled_from(["\t", ","]), st.booleans()).map(
        lambda x: "".join(x[1].join(r) + ("\r\n" if x[2] else "\n") for r in x[0]))


@settings(max_examples=300, deadline=None)
@given(_streams(), st.booleans(), st.booleans(), st.integers(1, 3))
def test_arrow_split_equals_the_row_parser(data: str, csv: bool, header: bool, ncols: int) -> None:
    cols = [ColumnDesc(f"c{i}", SqlType("text")) for i in range(ncols)]
    raw = data.encode()
    delim, null = ("," , "") if csv else ("\t", "\\N")
    fast = _arrow_fields(raw, ncols, csv=csv, delimiter=delim, null=null, header=header)
    if fast is None:
        return
    ref = _reference_fields(raw, cols, csv=csv, delimiter=delim, null=null, header=header)
    assert [c.to_pylist() for c in fast] == [c.to_pylist() for c in ref], (data, csv, header)


def test_first_error_in_row_order() -> None:
    cols = [ColumnDesc("a", SqlType("int4")), ColumnDesc("b", SqlType("date"))]
    with pytest.raises(SqlError) as e:
        parse_copy_in(b"1\t2000-01-01\n2\tnope\nx\t2000-01-02\n", cols, csv=False, delimiter="\t",
                      null="\\N", header=False)
    assert e.value.sqlstate == "22007" or "nope" in str(e.value)


def test_lineitem_width_rows_take_the_vectorized_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lineitem-shaped stream converts every column with Arrow, never field by field (the
    per-row path took about 4 s per 100k rows; speed itself is measured by
    benches/copy_load.py, not asserted here)."""
    from catalog.storage import text_input

    def no_slow_path(arr, t):  # type: ignore[no-untyped-def]
        raise AssertionError(f"column of type {t} took the per-value path")

    monkeypatch.setattr(text_input, "_slow", no_slow_path)
    types = [SqlType("int8")] * 4 + [SqlType("numeric", ((15 << 16) | 2) + 4)] * 4 + [
        SqlType("bpchar", 5), SqlType("bpchar", 5)] + [SqlType("date")] * 3 + [
        SqlType("bpchar", 29), SqlType("bpchar", 14), SqlType("varchar", 48)]
    cols = [ColumnDesc(f"c{i}", t) for i, t in enumerate(types)]
    line = "1\t155190\t7706\t1\t17.00\t21168.23\t0.04\t0.02\tN\tO\t1996-03-13\t1996-02-12\t1996-03-22\tDELIVER IN PERSON\tTRUCK\tegular courts above the\n"
    data = (line * 200_000).encode()
    table = parse_copy_in(data, cols, csv=False, delimiter="\t", null="\\N", header=False)
    assert table.num_rows == 200_000
    assert table.column(13)[0].as_py() == "DELIVER IN PERSON".ljust(25) and table.column(10)[0].as_py() == dt.date(1996, 3, 13)
