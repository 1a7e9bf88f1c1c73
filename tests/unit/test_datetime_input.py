"""The datetime input functions (sql.interval, sql.datetime_text) compared with a live
PostgreSQL 15: each input's value (as Postgres prints it) or SQLSTATE must be Postgres' own.
Pure codec tests: PostgreSQL only, no Spark. The interval inputs are the interval literals of
Postgres' regression script interval.sql plus edge cases of DecodeInterval.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

import pytest

from server.pgwire.codec import (
    format_date,
    format_interval,
    format_time,
    format_timestamp,
    format_timestamptz,
)
from sql.datetime_text import parse_date, parse_time, parse_timestamp
from sql.errors import SqlError
from sql.interval import parse_interval
from sql.interval_typmod import interval_typmod
from sql.literal import cast_value
from sql.types import SqlType

# (text, qualifier)
INTERVAL_INPUTS = [
    ('01:00', ''),
    ('+02:00', ''),
    ('-08:00', ''),
    ('-1 +02:03', ''),
    ('-1 days +02:03', ''),
    ('1.5 weeks', ''),
    ('1.5 months', ''),
    ('10 years -11 month -12 days +13:14', ''),
    (');\nINSERT INTO INTERVAL_TBL (f1) VALUES (', ''),
    ('@ 10 days', ''),
    ('@ 5 hours', ''),
    ('@ 1 day', ''),
    ('@ 34 years', ''),
    ('@ 1 month', ''),
    ('@ 3 seconds ago', ''),
    ('6 months 3 days 52 hours 3 minutes 2 seconds', ''),
    ('6 months 36 days 5 hours 4 minutes 3 seconds', ''),
    ('2147483647 days 24 hrs', ''),
    ('2147483647 months 30 days', ''),
    ('1 month -1 hour', ''),
    ('-2147483648 days -24 hrs', ''),
    ('-2147483648 months -30 days', ''),
    ('2147483647 months 30 days -24 hrs', ''),
    ('-2147483648 months -30 days 24 hrs', ''),
    ('2147483647 months -30 days 1440 hrs', ''),
    ('-2147483648 months 30 days -1440 hrs', ''),
    ('1-2', ''),
    ('999', 'second'),
    ('999', 'minute'),
    ('999', 'hour'),
    ('999', 'day'),
    ('999', 'month'),
    ('1', 'year'),
    ('2', 'month'),
    ('3', 'day'),
    ('4', 'hour'),
    ('5', 'minute'),
    ('6', 'second'),
    ('1', 'year to month'),
    ('1-2', 'year to month'),
    ('1 2', 'day to hour'),
    ('1 2:03', 'day to hour'),
    ('1 2:03:04', 'day to hour'),
    ('1 2', 'day to minute'),
    ('1 2:03', 'day to minute'),
    ('1 2:03:04', 'day to minute'),
    ('1 2', 'day to second'),
    ('1 2:03', 'day to second'),
    ('1 2:03:04', 'day to second'),
    ('1 2', 'hour to minute'),
    ('1 2:03', 'hour to minute'),
    ('1 2:03:04', 'hour to minute'),
    ('1 2', 'hour to second'),
    ('1 2:03', 'hour to second'),
    ('1 2:03:04', 'hour to second'),
    ('1 2', 'minute to second'),
    ('1 2:03', 'minute to second'),
    ('1 2:03:04', 'minute to second'),
    ('1 +2:03', 'minute to second'),
    ('1 +2:03:04', 'minute to second'),
    ('1 -2:03', 'minute to second'),
    ('1 -2:03:04', 'minute to second'),
    ('123 11', 'day to hour'),
    ('123 11', 'day'),
    ('123 11', ''),
    ('123 2:03 -2:04', ''),
    ('1 day 01:23:45.6789', '(0)'),
    ('1 day 01:23:45.6789', '(2)'),
    ('12:34.5678', 'minute to second(2)'),
    ('1.234', 'second'),
    ('1.234', 'second(2)'),
    ('1 2.345', 'day to second(2)'),
    ('1 2:03', 'day to second(2)'),
    ('1 2:03.4567', 'day to second(2)'),
    ('1 2:03:04.5678', 'day to second(2)'),
    ('1 2.345', 'hour to second(2)'),
    ('1 2:03.45678', 'hour to second(2)'),
    ('1 2:03:04.5678', 'hour to second(2)'),
    ('1 2.3456', 'minute to second(2)'),
    ('1 2:03.5678', 'minute to second(2)'),
    ('1 2:03:04.5678', 'minute to second(2)'),
    ('1 month', ''),
    ('0', ''),
    ('1 2:03:04', ''),
    ('+1 -1:00:00', ''),
    ('-1 +1:00:00', ''),
    ('+1-2 -3 +4:05:06.789', ''),
    ('-1-2 +3 -4:05:06.789', ''),
    ('-23 hours 45 min 12.34 sec', ''),
    ('-1 day 23 hours 45 min 12.34 sec', ''),
    ('-1 year 2 months 1 day 23 hours 45 min 12.34 sec', ''),
    ('-1 year 2 months 1 day 23 hours 45 min +12.34 sec', ''),
    ('1 day -1 hours', ''),
    ('-1 days +1 hours', ''),
    ('1 years 2 months -3 days 4 hours 5 minutes 6.789 seconds', ''),
    ('', ''),
    ('2:03:04.45679', ''),
    ('3 4:05:06.7', ''),
    ('P0Y', ''),
    ('P1Y2M', ''),
    ('P1W', ''),
    ('P1DT2H3M4S', ''),
    ('P1Y2M3DT4H5M6.7S', ''),
    ('P-1Y-2M-3DT-4H-5M-6.7S', ''),
    ('PT-0.1S', ''),
    ('P00021015T103020', ''),
    ('P0002-10-15T10:30:20', ''),
    ('P0002', ''),
    ('P0002-10', ''),
    ('P0002-10-15', ''),
    ('P0002T1S', ''),
    ('P0002-10T1S', ''),
    ('P0002-10-15T1S', ''),
    ('PT10', ''),
    ('PT10:30', ''),
    ('P1Y0M3DT4H5M6S', ''),
    ('P1.0Y0M3DT4H5M6S', ''),
    ('P1.1Y0M3DT4H5M6S', ''),
    ('P1.Y0M3DT4H5M6S', ''),
    ('P.1Y0M3DT4H5M6S', ''),
    ('P10.5e4Y', ''),
    ('P.Y0M3DT4H5M6S', ''),
    ('-10 mons -3 days +03:55:06.70', ''),
    ('1 year 2 mons 3 days 04:05:06.699999', ''),
    ('0:0:0.7', ''),
    ('@ 0.70 secs', ''),
    ('0.7 seconds', ''),
    ('2562047788.01521550194 hours', ''),
    ('-2562047788.01521550222 hours', ''),
    ('153722867280.912930117 minutes', ''),
    ('-153722867280.912930133 minutes', ''),
    ('9223372036854.775807 seconds', ''),
    ('-9223372036854.775808 seconds', ''),
    ('9223372036854775.807 milliseconds', ''),
    ('-9223372036854775.808 milliseconds', ''),
    ('9223372036854775807 microseconds', ''),
    ('-9223372036854775808 microseconds', ''),
    ('PT2562047788H54.775807S', ''),
    ('PT-2562047788H-54.775808S', ''),
    ('PT2562047788:00:54.775807', ''),
    ('PT2562047788.0152155019444', ''),
    ('PT-2562047788.0152155022222', ''),
    ('2147483648 years', ''),
    ('-2147483649 years', ''),
    ('2147483648 months', ''),
    ('-2147483649 months', ''),
    ('2147483648 days', ''),
    ('-2147483649 days', ''),
    ('2562047789 hours', ''),
    ('-2562047789 hours', ''),
    ('153722867281 minutes', ''),
    ('-153722867281 minutes', ''),
    ('9223372036855 seconds', ''),
    ('-9223372036855 seconds', ''),
    ('9223372036854777 millisecond', ''),
    ('-9223372036854777 millisecond', ''),
    ('9223372036854775808 microsecond', ''),
    ('-9223372036854775809 microsecond', ''),
    ('P2147483648', ''),
    ('P-2147483649', ''),
    ('P1-2147483647-2147483647', ''),
    ('PT2562047789', ''),
    ('PT-2562047789', ''),
    ('2147483647 weeks', ''),
    ('-2147483648 weeks', ''),
    ('2147483647 decades', ''),
    ('-2147483648 decades', ''),
    ('2147483647 centuries', ''),
    ('-2147483648 centuries', ''),
    ('2147483647 millennium', ''),
    ('-2147483648 millennium', ''),
    ('1 week 2147483647 days', ''),
    ('-1 week -2147483648 days', ''),
    ('2147483647 days 1 week', ''),
    ('-2147483648 days -1 week', ''),
    ('P1W2147483647D', ''),
    ('P-1W-2147483648D', ''),
    ('P2147483647D1W', ''),
    ('P-2147483648D-1W', ''),
    ('1 decade 2147483647 years', ''),
    ('1 century 2147483647 years', ''),
    ('1 millennium 2147483647 years', ''),
    ('-1 decade -2147483648 years', ''),
    ('-1 century -2147483648 years', ''),
    ('-1 millennium -2147483648 years', ''),
    ('2147483647 years 1 decade', ''),
    ('2147483647 years 1 century', ''),
    ('2147483647 years 1 millennium', ''),
    ('-2147483648 years -1 decade', ''),
    ('-2147483648 years -1 century', ''),
    ('-2147483648 years -1 millennium', ''),
    ('0.1 millennium 2147483647 months', ''),
    ('0.1 centuries 2147483647 months', ''),
    ('0.1 decades 2147483647 months', ''),
    ('0.1 yrs 2147483647 months', ''),
    ('-0.1 millennium -2147483648 months', ''),
    ('-0.1 centuries -2147483648 months', ''),
    ('-0.1 decades -2147483648 months', ''),
    ('-0.1 yrs -2147483648 months', ''),
    ('2147483647 months 0.1 millennium', ''),
    ('2147483647 months 0.1 centuries', ''),
    ('2147483647 months 0.1 decades', ''),
    ('2147483647 months 0.1 yrs', ''),
    ('-2147483648 months -0.1 millennium', ''),
    ('-2147483648 months -0.1 centuries', ''),
    ('-2147483648 months -0.1 decades', ''),
    ('-2147483648 months -0.1 yrs', ''),
    ('0.1 months 2147483647 days', ''),
    ('-0.1 months -2147483648 days', ''),
    ('2147483647 days 0.1 months', ''),
    ('-2147483648 days -0.1 months', ''),
    ('0.5 weeks 2147483647 days', ''),
    ('-0.5 weeks -2147483648 days', ''),
    ('2147483647 days 0.5 weeks', ''),
    ('-2147483648 days -0.5 weeks', ''),
    ('0.01 months 9223372036854775807 microseconds', ''),
    ('-0.01 months -9223372036854775808 microseconds', ''),
    ('9223372036854775807 microseconds 0.01 months', ''),
    ('-9223372036854775808 microseconds -0.01 months', ''),
    ('0.1 weeks 9223372036854775807 microseconds', ''),
    ('-0.1 weeks -9223372036854775808 microseconds', ''),
    ('9223372036854775807 microseconds 0.1 weeks', ''),
    ('-9223372036854775808 microseconds -0.1 weeks', ''),
    ('0.1 days 9223372036854775807 microseconds', ''),
    ('-0.1 days -9223372036854775808 microseconds', ''),
    ('9223372036854775807 microseconds 0.1 days', ''),
    ('-9223372036854775808 microseconds -0.1 days', ''),
    ('P0.1Y2147483647M', ''),
    ('P-0.1Y-2147483648M', ''),
    ('P2147483647M0.1Y', ''),
    ('P-2147483648M-0.1Y', ''),
    ('P0.1M2147483647D', ''),
    ('P-0.1M-2147483648D', ''),
    ('P2147483647D0.1M', ''),
    ('P-2147483648D-0.1M', ''),
    ('P0.5W2147483647D', ''),
    ('P-0.5W-2147483648D', ''),
    ('P2147483647D0.5W', ''),
    ('P-2147483648D-0.5W', ''),
    ('P0.01MT2562047788H54.775807S', ''),
    ('P-0.01MT-2562047788H-54.775808S', ''),
    ('P0.1DT2562047788H54.775807S', ''),
    ('P-0.1DT-2562047788H-54.775808S', ''),
    ('PT2562047788.1H54.775807S', ''),
    ('PT-2562047788.1H-54.775808S', ''),
    ('PT2562047788H0.1M54.775807S', ''),
    ('PT-2562047788H-0.1M-54.775808S', ''),
    ('P0.1-2147483647-00', ''),
    ('P00-0.1-2147483647', ''),
    ('P00-0.01-00T2562047788:00:54.775807', ''),
    ('P00-00-0.1T2562047788:00:54.775807', ''),
    ('PT2562047788.1:00:54.775807', ''),
    ('PT2562047788:01.:54.775807', ''),
    ('0.1 2562047788:0:54.775807', ''),
    ('0.1 2562047788:0:54.775808 ago', ''),
    ('2562047788.1:0:54.775807', ''),
    ('2562047788.1:0:54.775808 ago', ''),
    ('2562047788:0.1:54.775807', ''),
    ('2562047788:0.1:54.775808 ago', ''),
    ('-2147483648 months ago', ''),
    ('-2147483648 days ago', ''),
    ('-9223372036854775808 microseconds ago', ''),
    ('-2147483648 months -2147483648 days -9223372036854775808 microseconds ago', ''),
    ('-2147483648 months -2147483648 days -9223372036854775808 us', ''),
    ('2 days', ''),
    ('100 y', ''),
    ('99 y', ''),
    ('-99 y', ''),
    ('-100 y', ''),
    ('1000000000 days', ''),
    ('256 microseconds', ''),
    ('3000000 months', ''),
    ('3000000 days', ''),
    ('1 month 2146410 days', ''),
    ('4611686018427387904 usec', ''),
    ('4 millenniums 5 centuries 4 decades 1 year 4 months 4 days 17 minutes 31 seconds', ''),
    ('100000000y 10mon -1000000000d -100000h -10min -10.000001s ago', ''),
    ('1 millisecond', ''),
    ('1 microsecond', ''),
    ('500 seconds 99 milliseconds 51 microseconds', ''),
    ('3 days 5 milliseconds', ''),
    ('1 second 2 seconds', ''),
    ('10 milliseconds 20 milliseconds', ''),
    ('5.5 seconds 3 milliseconds', ''),
    ('1:20:05 5 microseconds', ''),
    ('1 day 1 day', ''),
    ('30 days', ''),
    ('@ 1 minute', ''),
    ('@ 5 hour', ''),
    ('@ 10 day', ''),
    ('@ 34 year', ''),
    ('@ 3 months', ''),
    ('@ 14 seconds ago', ''),
    ('1 day 2 hours 3 minutes 4 seconds', ''),
    ('6 years', ''),
    ('5 months', ''),
    ('5 months 12 hours', ''),
    ('badly formatted interval', ''),
    ('@ 30 eons ago', ''),
    ('2147483647 years', ''),
    ('-2147483648 years', ''),
    ('.001 second', ''),
    ('1-2 3:4 5 day', ''),
    ('P1Y2M3DT4H', ''),
    ('P0001-02-03T04:05:06', ''),
    ('@ 1 hour ago', ''),
    ('0.5 day', ''),
    ('10', 'month'),
    ('1.5', 'year'),
    ('2:03.5', 'minute to second'),
    ('2:03', 'minute to second'),
    ('1.234567', 'second(3)'),
    ('1.2345', '(2)'),
    ('5 ago', ''),
    ('1 day ago ago', ''),
    ('178956970 years 7 months', ''),
    ('178956971 years', ''),
    ('-2147483648 months', ''),
    ('PT1.5S', ''),
    ('P1.5Y', ''),
    ('P-1Y-2M', ''),
    ('PT-1.5H', ''),
    ('P20010203T040506', ''),
    ('P20010203', ''),
    ('PT040506.5', ''),
    ('P1Y2', ''),
    ('P1Y2M3', ''),
    ('P', ''),
    ('PT', ''),
    ('1 day 2 days', ''),
    ('1 hour 1 hour', ''),
    ('1:00 1 hour', ''),
    ('1:00 .5 days', ''),
    ('.5 days 1:00', ''),
    ('1 day quarter', ''),
    ('1 quarter', ''),
    ('1 timezone', ''),
    ('-1.5 hours', ''),
    ('+1.5 hours', ''),
    ('1.5', ''),
    ('  1 day  ', ''),
    ('1 d 2 h 3 m 4 s', ''),
    ('1 y 2 mon', ''),
    ('3 4:05:06', ''),
    ('-3 4:05:06', ''),
    ('-1-2', ''),
    ('1-12', ''),
    ('1 - 2', ''),
    ('1 day -2', ''),
    ('@1 day', ''),
    ('1 day @', ''),
    ('23:59:60', ''),
    ('1:60', ''),
    ('24:00:00', ''),
    ('99999999999:00', ''),
    ('1:2:3.9999999', ''),
    ('1:2:3.', ''),
    ('1 min 2 sec 3 ms 4 us', ''),
    ('1.5 ms', ''),
    ('1 sec 1.5 ms', ''),
    ('1.5 sec 1 ms', ''),
    ('1e3 days', ''),
    ('infinity', ''),
    ('invalid', ''),
    ('epoch', ''),
    ('1 mon 2 months', ''),
    ('0.3 years', ''),
    ('0.01 centuries', ''),
    ('2 microseconds', ''),
    ('1 microsecon', ''),
    ('1 millenniums', ''),
    ('1 centurys', ''),
    ('1day', ''),
    ('1day2hours', ''),
    ('1 hr', ''),
    ('- 1 day', ''),
    ('1 -day', ''),
    (' P1Y', ''),
    ('p1y', ''),
    ('P1y', ''),
    ('1 day 01:02:03.456789123', ''),
]

DATE_INPUTS = ["1999-01-08", "99-01-08", "69-12-31", "70-01-01", "2000-02-30", "epoch", " 2020-1-2 ", "2020-01-02 10:00:00",
               "2020-01-02T10:00", "2020-01-02 10:00:00+02", "2020/01/02", "junk", "0000-01-01", "10000-01-01", "5874897-12-31", "5874898-01-01",
               "January 8, 1999", "1999-Jan-08", "08-Jan-1999", "Jan-08-1999", "99 Jan 08", "1999 Jan 08", "08 Jan 1999",
               "Jan 08 1999", "99 08 Jan", "1999 08 Jan", "19990108", "990108", "Jan 08 99", "08 Jan 99", "01 Jan 02",
               "99-Jan-08", "Jan-08-99", "Sept 3 2001", "Feb 30 2001", "Jan 08 1999 junk", "1999.008", "J2451187",
               "1999 01 08", "1999 08 01", "1999 1 8", "1999 13 01", "1999 02 30", "99 01 08", "08 01 1999", "01 08 99",
               "1999 01 08 10:00", "1999 01 008", "1999 01"]
TIMESTAMP_INPUTS = ["2020-01-02 03:04:05.678", "2020-01-02T03:04:05", "2020-01-02", "epoch", "2020-01-02 24:00:00",
                    "1999-12-31 23:59:59.9999996", "2020-01-02 03:04", "99-01-08 04:05:06", "2020-02-30 00:00:00",
                    "2020-01-02 25:00:00", "2020-01-02 03:04:05 junk",
                    "294277-01-01 00:00:00", "1999 01 08 04:05:06", "1999 01 08 04:05:06 junk"]
TIMESTAMPTZ_INPUTS = ["2020-01-02 03:04:05+02", "2020-01-02 03:04:05-07:30", "2020-01-02 03:04:05Z", "2020-01-02 03:04:05 UTC",
                      "2050-07-10 17:32:01 Europe/Helsinki", "2050-01-10 17:32:01 Europe/Helsinki",
                      "2020-03-08 02:30:00 America/New_York", "2020-01-02 03:04:05 Mars/Olympus", "2020-01-02+05", "epoch",
                      "2020-01-02 03:04:05 EST", "2020-07-02 03:04:05 PDT", "2020-01-02 03:04:05 CEST", "2020-01-02 03:04:05 XYZ",
                      "2011-03-27 02:00:00 MSK", "2014-10-26 01:00:00 Europe/Moscow", "2011-03-27 03:00:00 Europe/Moscow",
                      "2020-01-02 03:04:05 pm", "2020-01-02 11:04:05 AM EST",
                      "Mon Feb 10 17:32:01 1997 PST", "Mon Feb 10 17:32:01.4 1997 PST", "19970210 173201 -0800",
                      "Feb 10 5:32PM 1997", "97FEB10 5:32:01PM UTC", "19970210 173201 America/New_York",
                      "Wed Jul 11 10:51:14 America/New_York 2001", "Wed Jul 11 10:51:14 GMT-4 2001", "20500710 173201 Europe/Helsinki",
                      "Feb-10-1997 17:32:01 PST", "Feb 16 17:32:01 0097", "Dec 31 17:32:01 1999", "Sat Mar 12 23:58:48 1000 IST"]
TIME_INPUTS = ["1:2:3.789", "01:02", "23:59:59.9999994", "12:00:00+02", "2020-05-26 13:30:25.575401", "allballs", "25:00:00",
               "12:60:00", "1:2:3.", "junk",
               "11:59:59.99 PM", "02:03 PST", "12:00 am", "12:30 PM", "13:00 PM", "11:59 EDT"]
# timestamp(p) / time(p): (type, text)
ROUNDED_INPUTS = [("timestamp(3)", "2020-01-01 00:00:00.6666666"), ("timestamp(0)", "1999-12-31 23:59:59.5"),
                  ("timestamp(0)", "2000-01-01 00:00:00.5"), ("timestamp(2)", "1970-01-01 00:00:00.125"),
                  ("timestamptz(1)", "2020-01-01 00:00:00.55+01"), ("time(2)", "01:02:03.455"), ("time(0)", "11:59:59.5")]


@pytest.fixture(scope="module")
def pg() -> Iterator[Any]:
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("datetime-input-") as dsn:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("SET DateStyle = 'ISO, MDY'")
        conn.execute("SET IntervalStyle = 'postgres'")
        yield conn
        conn.close()


def _pg(conn: Any, sql: str) -> tuple[str, str]:
    import psycopg

    try:
        return "ok", conn.execute(sql).fetchone()[0]
    except psycopg.Error as e:
        return "error", e.sqlstate or ""


def _mine(f: Any) -> tuple[str, str]:
    try:
        return "ok", f()
    except SqlError as e:
        return "error", e.sqlstate


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _typmod(qual: str) -> int:
    m = re.fullmatch(r"(?i)(year|month|day|hour|minute|second)?(?:\s+to\s+(year|month|day|hour|minute|second))?\s*(?:\((\d)\))?",
                     qual)
    assert m, qual
    first, last, prec = m.groups()
    return interval_typmod(first, last, int(prec) if prec else None)


@pytest.mark.parametrize(("text", "qual"), INTERVAL_INPUTS)
def test_interval_input_matches_postgres(pg: Any, text: str, qual: str) -> None:
    sql = f"interval{qual} {_quote(text)}" if qual.startswith("(") else f"interval {_quote(text)} {qual}"
    expected = _pg(pg, f"SELECT ({sql})::text")
    assert _mine(lambda: format_interval(parse_interval(text, _typmod(qual)))) == expected


def _refused_or_same(mine: tuple[str, str], expected: tuple[str, str]) -> None:
    """Same value or SQLSTATE, or a clear 0A000 refusal (never a different value)."""
    if mine == ("error", "0A000"):
        return
    assert mine == expected


@pytest.mark.parametrize("text", DATE_INPUTS)
def test_date_input_matches_postgres(pg: Any, text: str) -> None:
    _refused_or_same(_mine(lambda: format_date(parse_date(text))), _pg(pg, f"SELECT (date {_quote(text)})::text"))


@pytest.mark.parametrize("text", TIMESTAMP_INPUTS)
def test_timestamp_input_matches_postgres(pg: Any, text: str) -> None:
    _refused_or_same(_mine(lambda: format_timestamp(parse_timestamp(text, tz=False))),
                     _pg(pg, f"SELECT (timestamp {_quote(text)})::text"))


@pytest.mark.parametrize("text", TIMESTAMPTZ_INPUTS)
def test_timestamptz_input_matches_postgres(pg: Any, text: str) -> None:
    _refused_or_same(_mine(lambda: format_timestamptz(parse_timestamp(text, tz=True))),
                     _pg(pg, f"SELECT (timestamptz {_quote(text)})::text"))


@pytest.mark.parametrize("text", TIME_INPUTS)
def test_time_input_matches_postgres(pg: Any, text: str) -> None:
    _refused_or_same(_mine(lambda: format_time(parse_time(text))), _pg(pg, f"SELECT (time {_quote(text)})::text"))


@pytest.mark.parametrize(("typ", "text"), ROUNDED_INPUTS)
def test_precision_rounds_like_postgres(pg: Any, typ: str, text: str) -> None:
    name, p = re.fullmatch(r"(\w+)\((\d)\)", typ).groups()  # type: ignore[union-attr]
    t = SqlType(name, int(p))
    fmt = {"timestamp": format_timestamp, "timestamptz": format_timestamptz, "time": format_time}[name]
    assert _mine(lambda: fmt(cast_value(text, SqlType("unknown"), t))) == _pg(pg, f"SELECT ({_quote(text)}::{typ})::text")


def test_special_words_are_today() -> None:
    now = dt.datetime(2024, 2, 29, 13, 0, tzinfo=dt.UTC)
    assert parse_date("tomorrow", now) == dt.date(2024, 3, 1)
    assert parse_timestamp("yesterday", tz=False, now=now) == dt.datetime(2024, 2, 28)
    assert parse_timestamp("now", tz=True, now=now) == now


OUTPUT_SAMPLES = ["0", "1 year 2 mons", "1 day 02:03:04", "-1 years -2 mons", "-1 day -02:03:04", "1 day -1 hours",
                  "-1 days +1 hours", "1 years 2 months -3 days 4 hours 5 minutes 6.789 seconds", "-23 hours 45 min 12.34 sec",
                  "-1 year 2 months 1 day 23 hours 45 min 12.34 sec", "@ 14 seconds ago", "-0.1 seconds", "1 second",
                  "-1 second", "1 mon 1 day 00:00:01", "-2147483648 months -2147483648 days -9223372036854775808 us",
                  "-10 mons -3 days +03:55:06.70", "7 days", "0.7 seconds", "-1.000001 seconds", "1 min -1 sec"]


@pytest.mark.parametrize("style", ["postgres", "postgres_verbose", "sql_standard", "iso_8601"])
def test_interval_output_styles_match_postgres(pg: Any, style: str) -> None:
    from sql.interval_text import format_interval as encode

    pg.execute(f"SET IntervalStyle = {style}")
    try:
        for text in OUTPUT_SAMPLES:
            expected = pg.execute(f"SELECT (interval {_quote(text)})::text").fetchone()[0]
            assert encode(parse_interval(text, sql_standard=style == "sql_standard"), style) == expected, text
    finally:
        pg.execute("SET IntervalStyle = postgres")


def test_set_refuses_output_styles_it_does_not_implement() -> None:
    from server.session import Session

    s = Session("materialize", "materialize", {})
    for name, value in (("DateStyle", "German"), ("DateStyle", "Postgres, MDY"), ("DateStyle", "SQL, DMY"),
                        ("IntervalStyle", "sql_standard"), ("standard_conforming_strings", "off")):
        with pytest.raises(SqlError) as e:
            s.set(name, value)
        assert e.value.sqlstate == "0A000"
    with pytest.raises(SqlError) as e:
        s.set("TimeZone", "America/New_York")  # Postgres accepts it: not supported here
    assert e.value.sqlstate == "0A000"
    with pytest.raises(SqlError) as e:
        s.set("TimeZone", "Nowhere/Land")  # Postgres rejects it too
    assert e.value.sqlstate == "22023"
    s.set("DateStyle", "DMY")
    assert s.get("DateStyle") == "ISO, DMY"
    s.set("IntervalStyle", "ISO_8601")
    assert s.get("IntervalStyle") == "iso_8601"
    # backslashes in '..' are always literal: off is refused, not ignored (was: accepted)
    s.set("standard_conforming_strings", "true")
    assert s.get("standard_conforming_strings") == "on"
    with pytest.raises(SqlError) as e:
        s.set("standard_conforming_strings", "maybe")
    assert e.value.sqlstate == "22023"
