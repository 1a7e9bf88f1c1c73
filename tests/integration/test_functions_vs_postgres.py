"""Aggregates and scalar functions compared row for row with a real PostgreSQL 15 on the same
data (NULLs, duplicates and empty groups included).

Numeric values compare by value (mzspark's unconstrained numeric does not keep Postgres'
display scale, DESIGN §12); everything else, arrays included, compares exactly as psycopg
decodes it from each server's own type OIDs.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, text_loaded

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.fa (g int, i2 smallint, i4 int, i8 bigint, n numeric, f4 real, f8 float8, s text, b bool)",
    "INSERT INTO {s}.fa VALUES (1, 1, 10, 100, 1.5, 1.5, 2.25, 'a', true), (1, 1, 10, 100, 1.5, 1.5, 2.25, 'a', true),"
    " (1, 4, 40, 400, 2.5, 2.5, 4.5, 'b', false), (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (2, 3, 30, 300, 10.25, 0.5, -1.0, 'c', true), (2, 5, 50, 500, -3.75, 8, 3.0, 'd', true),"
    " (3, 5, 50, 500, 0, 0, 0, 'e', false), (NULL, 6, 60, 600, 6, 6, 6, NULL, NULL)",
    "CREATE TABLE {s}.arr (id int, a int[], t text[])",
    "INSERT INTO {s}.arr VALUES (1, '{1,2,3}', '{x,y}'), (2, ARRAY[3, NULL, 5], ARRAY['a b', NULL, '', 'NULL']),"
    " (3, '{}', '{}'), (4, NULL, NULL), (5, '{2,2}', '{\"q\\\"\",z}')",
    "CREATE TABLE {s}.dt (id int, d date, ts timestamp, tz timestamptz, iv interval)",
    "INSERT INTO {s}.dt VALUES"
    " (1, '2020-01-31', '2020-01-31 10:20:30.123456', '2020-01-31 10:20:30.123456+00', '1 year 2 mons 3 days 04:05:06.789'),"
    " (2, '2021-02-28', '2021-02-28 23:59:59', '2021-02-28 23:59:59+00', '-1 mons 40 days -30:00:00'),"
    " (3, '1999-12-31', '1999-12-31 00:00:00', '1999-12-31 00:00:00+00', '00:00:00.5'),"
    " (4, NULL, NULL, NULL, NULL),"
    " (5, '2024-02-29', '2024-02-29 12:00:00', '2024-02-29 12:00:00+00', '-36 hours')",
    "CREATE TABLE {s}.one (x int)",
    "INSERT INTO {s}.one VALUES (1)",
    "CREATE TABLE {s}.uu (id int, s text)",
    "INSERT INTO {s}.uu VALUES (1, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'), (2, '{a0eebc999c0b4ef8bb6d6bb9bd380a12}'),"
    " (3, 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a10'), (4, NULL)",
    "CREATE TABLE {s}.uubad (s text)",
    "INSERT INTO {s}.uubad VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1')",
]

AGGREGATES = [
    # count/sum/avg over every numeric type, DISTINCT and FILTER
    "SELECT g, count(*), count(i2), sum(i2), sum(i4), sum(i8), sum(n), sum(f4), sum(f8) FROM fa GROUP BY g",
    "SELECT g, avg(i2), avg(i4), avg(i8), round(avg(n), 10), avg(f4), avg(f8) FROM fa GROUP BY g",
    "SELECT count(DISTINCT i2), sum(DISTINCT i4), avg(DISTINCT i8), sum(DISTINCT f8) FROM fa",
    "SELECT g, count(DISTINCT i2) FILTER (WHERE b), sum(i4) FILTER (WHERE s > 'a'), round(avg(n) FILTER (WHERE n > 0), 10) FROM fa GROUP BY g",
    "SELECT sum(i4), count(*), avg(f8) FROM fa WHERE g > 100",
    # statistics
    "SELECT g, stddev(f8), stddev_samp(f8), stddev_pop(f8), variance(f8), var_samp(f8), var_pop(f8) FROM fa GROUP BY g",
    "SELECT g, round(stddev(i4), 6), round(stddev_pop(i8), 6), round(variance(n), 6), round(var_pop(i2), 6) FROM fa GROUP BY g",
    # floats: the last bits depend on the summation algorithm and order (Postgres: Youngs-Cramer)
    "SELECT round(var_samp(DISTINCT f8)::numeric, 10), round(stddev_pop(f4)::numeric, 10) FROM fa",
    # booleans
    "SELECT g, bool_and(b), bool_or(b), every(b), every(i4 > 10) FROM fa GROUP BY g",
    # concat() skips NULLs at any arity (two arguments were bound as the NULL-strict ||), lpad/rpad
    # (were unbound: sqlglot's Pad node); found by tests/oracle
    "SELECT s, concat(s, s), concat(s, NULL), concat(s), concat(NULL::text, NULL), s || s FROM fa",
    "SELECT s, lpad(s, 4, '*'), rpad(s, 3), lpad(s, 0), rpad(s, 3, 'xy'), lpad(s || s, 1) FROM fa",
    # bool -> int keeps NULL (found by tests/oracle: a NULL boolean cast to 0)
    "SELECT b, CAST(b AS int), b::int4, CAST(bool_or(b) FILTER (WHERE false) AS int) * 1 FROM fa GROUP BY b",
    # string_agg / array_agg with ORDER BY, DISTINCT, FILTER and duplicates
    "SELECT g, string_agg(s, ',' ORDER BY s) FROM fa GROUP BY g",
    "SELECT g, string_agg(s, ', ' ORDER BY i4 DESC, s) FROM fa GROUP BY g",
    "SELECT string_agg(s, '-' ORDER BY s NULLS FIRST), string_agg(DISTINCT s, ';'), string_agg(DISTINCT s, ';' ORDER BY s DESC) FROM fa",
    "SELECT g, string_agg(s, s ORDER BY s) FROM fa GROUP BY g",
    "SELECT g, string_agg(s, ',' ORDER BY s) FILTER (WHERE i4 > 10) FROM fa GROUP BY g",
    "SELECT g, array_agg(i4 ORDER BY i4), array_agg(s ORDER BY s DESC), array_agg(n ORDER BY n NULLS FIRST) FROM fa GROUP BY g",
    "SELECT array_agg(DISTINCT i2), array_agg(DISTINCT s ORDER BY s DESC), array_agg(b ORDER BY g, s) FROM fa",
    "SELECT g, array_agg(f8 ORDER BY f8) FILTER (WHERE f8 > 2), array_agg(i8 ORDER BY i8) FILTER (WHERE false) FROM fa GROUP BY g",
    "SELECT array_agg(i4 ORDER BY i4) FROM fa WHERE g > 100",
    "SELECT g, array_agg(i2 ORDER BY i2 DESC NULLS LAST), array_agg(f4 ORDER BY f4) FROM fa GROUP BY g",
    # order-sensitive aggregates next to accumulable ones in one reduction
    "SELECT g, count(*), sum(i4), string_agg(s, '' ORDER BY s), max(n) FROM fa GROUP BY g",
]

ARRAYS = [
    "SELECT id, a, t FROM arr",
    "SELECT ARRAY[1, 2], ARRAY['a', NULL], ARRAY[1.5, 2], '{4,5}'::int[], '{}'::text[], ARRAY[]::bigint[], ARRAY[id, id * 2] FROM arr",
    # without FROM the query would be answered by the catalog's DuckDB, not Spark
    "SELECT x, '{1,NULL}'::int[], ARRAY['x y']::text, ARRAY[1.5] || 2.5 FROM one",
    "SELECT id, a[1], a[2], a[0], a[4], a[-1], a[id], t[1] FROM arr",
    "SELECT id, array_length(a, 1), array_length(a, 2), cardinality(a), cardinality(t), array_upper(a, 1), array_lower(a, 1) FROM arr",
    "SELECT id, array_to_string(a, ','), array_to_string(a, '-', '*'), array_to_string(t, '|') FROM arr",
    "SELECT id, array_position(a, 2), array_position(a, NULL), array_position(t, 'y') FROM arr",
    "SELECT id, array_cat(a, ARRAY[9]), a || ARRAY[7, 8], a || 6, 0 || a, a || a, array_append(a, 1), array_prepend(1, a), array_remove(a, 2) FROM arr",
    "SELECT id, a @> ARRAY[2], a <@ ARRAY[1, 2, 3, 5], a && ARRAY[5, 9], ARRAY[3] <@ a, a @> '{}' FROM arr",
    "SELECT id, 2 = ANY(a), 2 <> ALL(a), id < ANY(a), id <= ALL(a), NULL::int = ANY(a), 'x' = ANY(t) FROM arr",
    "SELECT id, a = ARRAY[1, 2, 3], a = '{2,2}', a < ARRAY[2] FROM arr",
    "SELECT id FROM arr WHERE 3 = ANY(a)",
    # Postgres orders a NULL element after every value (Spark: before)
    "SELECT id, a < ARRAY[3, NULL], a > ARRAY[1, NULL, 4], a >= a, a <= ARRAY[NULL]::int[], ARRAY[1] < ARRAY[NULL]::int[],"
    " ARRAY[NULL]::int[] > ARRAY[1], ARRAY[1, 2] < ARRAY[1, NULL], ARRAY[1, NULL] = ARRAY[1, NULL] FROM arr",
    "SELECT a.id, b.id, a.a < b.a, a.a = b.a, a.t > b.t FROM arr a, arr b",
    # a NULL null string: NULL elements are skipped
    "SELECT id, array_to_string(t, ',', NULL), array_to_string(ARRAY['a', 'b,', NULL, 'c'], ',', NULL) FROM arr",
    # records print as record_out does (quoting, NULL fields empty)
    "SELECT id, ROW(id, t, a, 'x y', '', NULL, 'q\"\\'), ROW(id) FROM arr",
    "SELECT id, a::text, t::text, ARRAY[1.5, NULL]::text FROM arr",
    "SELECT id, x FROM arr, unnest(a) AS x",
    "SELECT id, x, n FROM arr, unnest(t) WITH ORDINALITY AS u(x, n)",
    "SELECT u.* FROM one, unnest(ARRAY['p', 'q', NULL]) WITH ORDINALITY AS u",
    "SELECT id, u.x FROM arr CROSS JOIN LATERAL unnest(a) AS u(x) WHERE u.x > 1",
    "SELECT x, count(*) FROM arr, unnest(a) AS x GROUP BY x",
    "SELECT a, count(*) FROM arr GROUP BY a",
    "SELECT id, array_agg(x ORDER BY x DESC) FROM arr, unnest(a) AS x GROUP BY id",
]

_FIELDS = ["year", "month", "day", "hour", "minute", "second", "milliseconds", "microseconds", "dow", "isodow", "doy",
           "week", "quarter", "epoch", "decade", "century", "millennium", "isoyear"]
_IV_FIELDS = ["year", "month", "day", "hour", "minute", "second", "milliseconds", "microseconds", "quarter", "epoch",
              "decade", "century", "millennium"]
_TRUNC = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month", "quarter", "year", "decade",
          "century", "millennium"]

DATETIME = [
    "SELECT id, " + ", ".join(f"extract({f} FROM ts)" for f in _FIELDS) + " FROM dt",
    "SELECT id, " + ", ".join(f"extract({f} FROM tz)" for f in _FIELDS) + " FROM dt",
    "SELECT id, " + ", ".join(f"date_part('{f}', ts)" for f in _FIELDS) + " FROM dt",
    "SELECT id, " + ", ".join(f"extract({f} FROM d)" for f in _FIELDS if f not in ("hour", "minute", "second", "milliseconds", "microseconds")) + " FROM dt",
    "SELECT id, " + ", ".join(f"extract({f} FROM iv)" for f in _IV_FIELDS) + " FROM dt",
    "SELECT id, " + ", ".join(f"date_part('{f}', iv)" for f in _IV_FIELDS) + " FROM dt",
    "SELECT id, " + ", ".join(f"date_trunc('{u}', ts)" for u in _TRUNC) + " FROM dt",
    "SELECT id, " + ", ".join(f"date_trunc('{u}', tz)" for u in _TRUNC) + ", date_trunc('month', d) FROM dt",
    "SELECT id, " + ", ".join(f"date_trunc('{u}', iv)" for u in _TRUNC if u != "week") + " FROM dt",
    "SELECT id, extract(YEARS FROM ts), date_part('mon', ts), date_trunc('hr', ts) FROM dt",
    "SELECT id, ts + iv, ts - iv, d + iv, d - iv, tz + iv, iv + ts, d + 30, d - 1, d - '2020-01-01'::date FROM dt",
    "SELECT id, ts - '2020-01-01 12:00:00'::timestamp, tz - '2021-01-01 00:00:00+00'::timestamptz, '2020-01-01'::timestamp - ts FROM dt",
    "SELECT id, iv + iv, iv - '1 day'::interval, -iv, iv * 2, iv * 2.5, 1.5 * iv, iv / 3, iv / 0.5 FROM dt",
    "SELECT id, iv > '1 mon', iv = '-1 mons 40 days -30:00:00', '30 days'::interval = '1 mon'::interval, iv < '0' FROM dt",
    "SELECT id, justify_days(iv), justify_hours(iv), justify_interval(iv) FROM dt",
    "SELECT justify_interval('1 mon -1 hour'), justify_interval('-1 mon 1 hour'), justify_days('-35 days'), justify_hours('-25:00') FROM one",
    "SELECT id, make_date(2020 + id, id, id * 5), make_timestamp(2020, id, 2, 3, 4, 5.25) FROM dt",
    "SELECT id, to_char(ts, 'YYYY-MM-DD HH24:MI:SS'), to_char(tz, 'Dy Mon DD HH12:MI:SS.MS AM'), to_char(d, 'YY/MM/DD'), to_char(ts, 'YYYY-MM-DD HH24:MI:SS.US') FROM dt",
    "SELECT now() > '2020-01-01'::timestamptz, now() = current_timestamp, now() - now(), current_date = now()::date FROM one",
    "SELECT id FROM dt WHERE ts + '1 day' > '2021-01-01' AND iv < '1 year'",
    "SELECT min(ts), max(tz), count(d) FROM dt",
    "SELECT min(iv), max(iv), sum(iv), avg(iv), count(iv) FROM dt",
    "SELECT id > 2, min(iv), max(iv), sum(iv) FROM dt GROUP BY id > 2",
    "SELECT min(v), max(v), sum(v) FROM (VALUES ('1 mon'::interval), ('31 days'), ('29 days 23:00:00')) AS t(v), one",
    # three Lets over one source in one query: Spark's cache lookup failed on the lazy
    # checkpoint (UnresolvedException, XX000; oracle seed 4000536)
    "SELECT min(m) FROM (SELECT min(1) AS m FROM fa AS a1 FULL JOIN fa AS a2 USING (b) WHERE ((DATE '2024-02-29' + a1.i4) "
    "IN (DATE '1999-06-30', DATE '2024-01-15', DATE '2000-01-01')) UNION ALL SELECT min(1) AS m FROM fa AS a1 FULL JOIN fa "
    "AS a2 USING (b) WHERE NOT ((DATE '2024-02-29' + a1.i4) IN (DATE '1999-06-30', DATE '2024-01-15', DATE '2000-01-01')) "
    "UNION ALL SELECT min(1) AS m FROM fa AS a1 FULL JOIN fa AS a2 USING (b) WHERE (((DATE '2024-02-29' + a1.i4) IN "
    "(DATE '1999-06-30', DATE '2024-01-15', DATE '2000-01-01'))) IS NULL) AS u",
    # AT TIME ZONE / timezone(): IANA names (any case), POSIX numeric offsets, interval offsets,
    # DST gaps and overlaps resolved as Postgres does, historical (LMT) offsets
    "SELECT id, tz AT TIME ZONE 'America/New_York', ts AT TIME ZONE 'Europe/Moscow', timezone('asia/kolkata', tz), "
    "tz AT TIME ZONE INTERVAL '-08:00', ts AT TIME ZONE '+05', tz AT TIME ZONE 'utc', d AT TIME ZONE 'Europe/Paris' FROM dt",
    "SELECT v, v AT TIME ZONE 'Europe/Moscow', v AT TIME ZONE 'America/New_York', (v AT TIME ZONE 'Asia/Singapore') "
    "AT TIME ZONE 'UTC' FROM (VALUES ('2011-03-27 02:00:00'::timestamp), ('2011-03-27 02:59:59'), ('2011-03-27 03:00:00'), "
    "('2011-03-26 23:00:00'), ('2021-11-07 01:30:00'), ('2021-11-07 00:59:59'), ('2021-03-14 02:30:00'), "
    "('1881-12-10 00:00:00'), ('2024-06-01 12:00:00')) AS t(v), one",
    # LIKE / ILIKE ... ESCAPE (was 0A000), and backslashes before ordinary characters
    "SELECT s, s LIKE 'a%' ESCAPE '#', 'h%' LIKE 'h#%' ESCAPE '#', 'h%wkeye' NOT LIKE 'h#%' ESCAPE '#', "
    "'maca' LIKE 'm%aca' ESCAPE '%', 'be_r' LIKE 'b_e__r' ESCAPE '_', 'I_DIO' ILIKE 'i$_d%o' ESCAPE '$', "
    "'a\\bc' LIKE 'a\\bc' ESCAPE '', 'abc' LIKE 'a\\bc', 'a%c' LIKE 'a\\%c', s LIKE 'a%' ESCAPE NULL FROM fa",
    # arithmetic on numeric(p,s) values is unconstrained numeric (was cast back to (p,s): 3.33 * 3.33
    # = 11.09, and a sum past p digits overflowed; oracle seed 4001941)
    "SELECT (n / 7)::numeric(10,2) * (n / 7)::numeric(10,2), 3.33::numeric(10,2) * 3.33::numeric(10,2), "
    "99999999.99::numeric(10,2) + 99999999.99::numeric(10,2), min(n::numeric(10,2) * n::numeric(10,2)) OVER () FROM fa",
    "SELECT g, min((n / 7)::numeric(10,2) * (n / 7)::numeric(10,2)), max(n::numeric(10,2) + 99999999.99::numeric(10,2)) FROM fa GROUP BY g",
    # byte-order collations are accepted (was 0A000 "expression IDENTIFIER")
    "SELECT s COLLATE \"C\", s < 'b' COLLATE \"POSIX\", upper(s) COLLATE \"default\" FROM fa ORDER BY s COLLATE \"C\"",
    # POSIX regex match operators and ^@ (were refused as an internal function name)
    "SELECT s, s ~ 'b', s ~* '^B', s !~ 'a.$', s !~* 'A', s ^@ 'ab', 'x' ~ 'y', s ~ NULL FROM fa",
    # the sum/avg of no rows is a NULL interval (was a struct of NULL fields: XX000 on output)
    "SELECT id, sum(iv) FILTER (WHERE false), avg(iv) FILTER (WHERE id < 0), avg(iv) FROM dt GROUP BY id",
    "SELECT a.id, b.id, age(a.ts, b.ts), age(b.tz, a.tz), age(a.d, b.d) FROM dt a, dt b",
    "SELECT age('2020-03-01', '2020-01-31'), age('2020-01-31', '2020-03-01'), age('2021-03-01 00:00:00.5', '2020-02-29 23:59:59.75') FROM one",
    "SELECT age(ts) > '1 day', age(d) > '0' FROM dt",
]

MISC = [
    # power of 1 or to 0 is 1, NaN and infinities included (C's pow)
    "SELECT power(1::float8, 'NaN'::float8), power('NaN'::float8, 0::float8), power(1::float8, 'inf'::float8) FROM one",
    # record_out text and Postgres' row null tests (every field NULL / every field not NULL)
    "SELECT CAST(ROW('Jim', 'Beam') AS text), ROW(1, NULL, 'a b', '', 'x\"y')::text FROM one",
    "SELECT ROW(NULL, NULL) IS NULL, ROW(1, NULL) IS NULL, ROW(1, NULL) IS NOT NULL, ROW(1, 2) IS NOT NULL FROM one",
    "SELECT ROW() IS NULL FROM one",
    # left / right with a negative n: all but the last / first |n| characters
    "SELECT i, left('ahoj', i), right('ahoj', i), left(s, i), right(s || 'xy', i) FROM fa, generate_series(-5, 5) AS t(i)",
    # quote_literal of a value holding a backslash is an E'' literal; it is strict, quote_nullable is not
    r"SELECT quote_literal(E'\\'), quote_literal('a''b\c'), quote_literal(NULL), quote_nullable(NULL), quote_nullable('x')",
    # round / trunc to a scale that is not a constant (Spark's round wants a constant one)
    "SELECT i, round((-2.5 * 10 ^ i)::numeric, -i), round((0.5 * 10 ^ i)::numeric, -i), round(1234.5678, i),"
    " trunc((2.57 * 10 ^ i)::numeric, -i), round(n, i4 / 10 - 3) FROM fa, generate_series(-5, 5) AS t(i)",
    "SELECT i4, round(i4 / 7.0, 3), round(n, 1), trunc(n, 1), trunc(-1.2399, 2), round(-2.5), round(2.5) FROM fa",
    "SELECT i4, mod(i4, 7), mod(-7, 3), div(i4, 7), div(-7.5, 2), i4 % 7 FROM fa",
    "SELECT power(2, 10), round(power(2.0, 0.5), 8), sqrt(16), round(sqrt(2.0), 8), exp(0), ln(1), log(100), log(2, 8), log(10, 1000) FROM one",
    "SELECT i4, gcd(i4, 12), lcm(i4, 4), gcd(i8, 0), gcd(-12, 18), lcm(0, 5) FROM fa",
    "SELECT f8, width_bucket(f8, 0, 10, 5), width_bucket(n, -5, 15, 4) FROM fa",
    "SELECT s, starts_with(s, 'a'), split_part('a,b,c', ',', -1), split_part('a,b,c', ',', -3), split_part('a,b,c', ',', -4) FROM fa",
    "SELECT s, regexp_replace('foobarbaz', 'b(..)', 'X\\1Y'), regexp_replace('foobarbaz', 'b(..)', 'X\\1Y', 'g'),"
    " regexp_replace('AbAB', 'ab', '-', 'gi'), regexp_replace(s, '[aeiou]', '*'), regexp_replace('a1b22', '[[:digit:]]+', '#', 'g') FROM fa",
    "SELECT s, regexp_match('foobarbequebaz', '(bar)(beque)'), regexp_match('abc', 'x'), regexp_match(s, '[a-c]'), regexp_match('ABC', 'b', 'i') FROM fa",
    # Postgres 15's regexp_count / regexp_instr / regexp_substr / regexp_like, regexp_replace
    # with start and N, regexp_split_to_array (N-th matches, start positions, flags, NULL sources)
    "SELECT s, regexp_count(s, '[a-c]'), regexp_count('123123123123', '123', 3), regexp_count('ABCABC', 'Abc', 1, 'i'),"
    " regexp_count('aaa', 'a*'), regexp_count(E'a\\n', 'a$'), regexp_count('123123', '123', 33) FROM fa",
    "SELECT s, regexp_like(s, '^[a-c]'), regexp_like('Steven', '^Ste(v|ph)en$'), regexp_like('a' || chr(10) || 'd', 'a.d'),"
    " regexp_like('ABC', 'b', 'i'), regexp_like('ABC', 'b', 'ic') FROM fa",
    "SELECT s, regexp_instr(s, '[a-c]'), regexp_instr('abcabcabc', 'a.c', 2), regexp_instr('abcabcabc', 'a.c', 1, 3),"
    " regexp_instr('abcabcabc', 'a.c', 1, 4), regexp_instr('abcabcabc', 'A.C', 1, 2, 1, 'i'), regexp_instr('aab', 'a+', 1, 2),"
    " regexp_instr('1234567890', '(123)(4(56)(78))', 1, 1, 0, 'i', 5), regexp_instr('abcabc', '^a', 4) FROM fa",
    "SELECT s, regexp_substr(s, '[a-c]+'), regexp_substr('abcabcabc', 'a.c', 2), regexp_substr('abcabcabc', 'A.C', 1, 2, 'i'),"
    " regexp_substr('1234567890', '(123)(4(56)(78))', 1, 1, 'i', 3), regexp_substr('foo', 'foo(bar)', 1, 1, '', 1),"
    " regexp_substr('1234567890', '(123)(4(56)(78))', 1, 1, 'i', 5), regexp_substr('a+b+', 'a|b', 1, 2) FROM fa",
    "SELECT s, regexp_replace(s, '[a-c]', 'X', 2), regexp_replace('A PostgreSQL function', 'a|e|i|o|u', 'X', 1, 2, 'i'),"
    " regexp_replace('A PostgreSQL function', 'a|e|i|o|u', 'X', 7, 0, 'i'), regexp_replace('A PostgreSQL function', 'a|e|i|o|u', 'X', 1, 1, 'g'),"
    " regexp_replace('foobarbaz', 'b(.)', '<\\1\\&>', 1, 2), regexp_replace('aaa', 'a', 'X', 2, 0) FROM fa",
    "SELECT $$a'b$$, $q$x\\y$q$ || 'z', regexp_split_to_array('the quick  fox', $re$\\s+$re$), $$1$$::int + 1 FROM one",
    "SELECT s, regexp_split_to_array(s, 'b'), regexp_split_to_array('123456', '1'), regexp_split_to_array('123456', '6'),"
    " regexp_split_to_array('thE QUick', 'e', 'i'), regexp_split_to_array('a  b c', '\\s+') FROM fa",
    "SELECT id, s::uuid, s::uuid::text FROM uu",
    "SELECT a.id, b.id, a.s::uuid = b.s::uuid, a.s::uuid < b.s::uuid FROM uu a, uu b",
    "SELECT s::uuid FROM uubad",
    "SELECT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, '{a0eebc999c0b4ef8bb6d6bb9bd380a12}'::uuid::text FROM one",
    # text || anynonarray: an unknown literal beside a non-string is text
    "SELECT i4, 'r' || i4, i8 || 'x', 'b' || b, n || '', 'f' || f8, 'd' || DATE '2024-01-02', 'a' || 'b' FROM fa",
    "SELECT n, n::text, (-n)::text, 10.0::numeric::text, 0.0::numeric::text, (-1.25)::text, 100::numeric::text FROM fa",
    "SELECT f8, f8::text, (f8 * 1e20::float8)::text, (f8 / 1e6::float8)::text, (0.1::float8 + 0.2::float8)::text, 1e15::float8::text,"
    " 123456789012345.6::float8::text, f4::text, (f4 / 3)::text, 'NaN'::float8::text, (-0.0::float8)::text FROM fa",
    # numeric / numeric keeps 10 fractional digits (Spark alone rounds to 6 once the operands'
    # precision exceeds 38: TPC-H Q8/Q14 answers were off in the 7th digit)
    "SELECT n, i4, round(n / 3, 9), round(100.00 * n / 7, 9), round(i4 / 7.0, 9),"
    " round(1.0 / 3, 9), round(-2.0 / 3.0, 9), round(1234567.1234 / 7.1, 9), 7.5 / 2.5, round(n / -0.3, 9) FROM fa",
    "SELECT round(sum(n) / nullif(sum(f8::numeric), 0), 9), round(sum(n * i4) / nullif(sum(i4), 0), 9) FROM fa GROUP BY g",
    # real (op) integer/numeric is double precision (Postgres' float48 operators)
    "SELECT f4, f4 / 3, f4 + 1, f4 * 2.5, f4 - i4, f4 < 2, 0.1::real = 0.1, 0.1::real = 0.1::real FROM fa",
]

# set-returning functions in the select list: a lateral FlatMap over the FROM
SRFS = [
    "SELECT generate_series(1, 3)",
    "SELECT generate_series(1, 3) AS g, 'x' FROM one",
    "SELECT id, generate_series(1, id) FROM arr",
    "SELECT id, unnest(a) AS u FROM arr WHERE id <> 3",
    "SELECT id, unnest(t) IS NULL FROM arr",
    "SELECT unnest(ARRAY['x', NULL, 'y'])",
    "SELECT DISTINCT generate_series(1, id) % 2 FROM arr",
    "SELECT id, generate_series(1, 3) * 2 AS g FROM arr WHERE id < 3 ORDER BY g DESC, id LIMIT 4",
    "SELECT count(*), sum(g) FROM (SELECT generate_series(1, 2000) AS g) t",
    "SELECT jsonb_array_elements('[1, \"a\", null]') FROM one",
    "SELECT jsonb_object_keys('{\"k\": 1, \"jj\": 2}') IS NULL, x FROM one",
    # Postgres rejects SRFs in WHERE (0A000)
    "SELECT id FROM arr WHERE generate_series(1, 2) > id",
]

# literal and operator syntax: E'' escape strings, SIMILAR TO, the name type, bytea functions
SYNTAX = [
    r"SELECT E'a\tb', E'it\'s', e'\x41\101', E'\u00e9', E'x''y', E'\\' FROM one",
    "SELECT s, s SIMILAR TO 'a%', s NOT SIMILAR TO '(b|c)%', s SIMILAR TO '_', 'a%b' SIMILAR TO 'a#%b' ESCAPE '#',"
    " s SIMILAR TO '[a-c]', 'a.c' SIMILAR TO 'a.c', 'abc' SIMILAR TO 'a.c' FROM fa",
    "SELECT s::name, 'abc'::name, repeat('x', 70)::name, repeat('é', 40)::name, length(repeat('y', 64)::name) FROM fa",
    "SELECT substring('1234567890'::bytea FROM 3), substr('\\x010203'::bytea, 2, 1), md5('abc'::bytea), md5('abc'),"
    " octet_length('abc'::bytea) FROM one",
]

# E'' strings: a \\u escape of a surrogate must be a high one followed by a low one (42601)
UNICODE_ERRORS = [r"SELECT E'wrong: \udb99' FROM one", r"SELECT E'wrong: \udb99xy' FROM one",
                  r"SELECT E'wrong: \udb99\u0061' FROM one", r"SELECT E'wrong: \U0000db99\U00000061' FROM one",
                  r"SELECT E'wrong: \U002FFFFF' FROM one", r"SELECT E'\udc00' FROM one", r"SELECT E'\u0000' FROM one"]
SYNTAX += [r"SELECT E'\ud83d\ude00', E'\U0001F600', E'\uD83D\uDE00x' FROM one", *UNICODE_ERRORS]

SYNTAX += [
    # jsonb values are DISTINCT by value (1.0 = 1.00 = 1), as jsonb `=` compares them
    "SELECT count(DISTINCT j), count(j) FROM (VALUES ('{\"a\": 1.0}'::jsonb), ('{\"a\": 1.00}'), ('{\"a\": 1}'),"
    " ('[1, 2.50]'), ('[1, 2.5]'), ('\"1.0\"'), ('\"1.00\"'), (NULL)) AS t(j), one",
    # GROUP BY / DISTINCT over jsonb group by value too; a group prints one of its values
    "SELECT count(*), sum(c), max(m), min(m) FROM (SELECT j, count(*) AS c, max(k) AS m FROM (VALUES ('{\"a\": 1.0}'::jsonb, 1),"
    " ('{\"a\": 1.00}', 2), ('{\"a\": 1}', 3), ('[1, 2.50]', 4), ('[1, 2.5]', 5), ('\"1.0\"', 6), (NULL, 7)) AS t(j, k) GROUP BY j) s, one",
    "SELECT count(*) FROM (SELECT DISTINCT j FROM (VALUES ('{\"a\": 1.0}'::jsonb), ('{\"a\": 1}'), ('2'), ('2.0')) AS t(j)) s, one",
    "SELECT j, count(*), max(k) FROM (VALUES ('{\"a\": 1.0}'::jsonb, 1), ('{\"a\": 1.0}', 2), ('[2.50]', 3), ('\"x\"', 4)) AS t(j, k), one GROUP BY j",
    # float variance without cancellation; `1e9+1` is 1e9 + 1
    "SELECT g, var_pop(v), var_samp(v), stddev(v) FROM (VALUES (1, 100000003::float8), (1, 100000004), (1, 100000005),"
    " (1, 100000006), (1, 100000007), (2, 1e9), (2, 1e9+1)) AS t(g, v), one GROUP BY g",
]

QUERIES = AGGREGATES + ARRAYS + DATETIME + MISC + SRFS + SYNTAX


REGEX_ERRORS = ["SELECT regexp_count('abc', 'b', 0) FROM one", "SELECT regexp_instr('abc', 'b', 1, 0) FROM one",
                "SELECT regexp_instr('abc', 'b', 1, 1, 2) FROM one", "SELECT regexp_substr('abc', 'b', 1, 1, '', -1) FROM one",
                "SELECT regexp_like('abc', 'b', 'g') FROM one", "SELECT regexp_substr('abc', 'b', 1, 1, 'g') FROM one",
                "SELECT regexp_replace('abc', 'b', 'x', 1, -1, 'i') FROM one", "SELECT regexp_replace('abc', 'b', 'x', '1') FROM one",
                "SELECT regexp_split_to_array('abc', 'b', 'g') FROM one", "SELECT regexp_count('abc', 'b', 1, 'z') FROM one"]
QUERIES += REGEX_ERRORS
POWER_ERRORS = ["SELECT power(0.0, -1) FROM one", "SELECT (-8.0) ^ 0.5 FROM one", "SELECT power(0::float8, -1) FROM one",
                "SELECT power((-8)::float8, 0.5) FROM one", "SELECT 1e300::float8 ^ 2 FROM one"]
QUERIES += POWER_ERRORS
# float8 width_bucket: NaN anywhere and infinite bounds are 2201G (was: Spark's NULL)
WIDTH_BUCKET_ERRORS = ["SELECT width_bucket(0::float8, 'NaN', 4.0::float8, 888) FROM one",
                       "SELECT width_bucket('NaN'::float8, 0, 4.0::float8, 888) FROM one",
                       "SELECT width_bucket(0.0::float8, 'Infinity'::float8, 5, 10) FROM one",
                       "SELECT width_bucket(0.0::float8, 5, '-Infinity'::float8, 20) FROM one"]
QUERIES += [*WIDTH_BUCKET_ERRORS, "SELECT width_bucket('Infinity'::float8, 1, 10, 10), width_bucket('-Infinity'::float8, 1, 10, 10) FROM one"]

# chr: the code point's character in UTF-8 (was Spark's chr, byte n % 256 as Latin-1: chr(955)
# was '»'), over each UTF-8 length's bounds; 0, negatives, surrogates and beyond U+10FFFF fail
QUERIES.append("SELECT i, chr(i) FROM unnest(ARRAY[65, 127, 128, 255, 256, 955, 2047, 2048, 55295, 57344, 65535, 65536,"
               " 128512, 1114111, NULL]) AS t(i)")
# substr's start + length is taken in bigint: past the end is the rest of the value (was 22003)
QUERIES.append("SELECT s, substring(s FROM 2 FOR 2147483646), substr(s, -2147483647, 2147483647), substr(s, 2147483647, 2147483647),"
               " substring(s::bytea FROM 2 FOR 2147483646) FROM fa")
# OVERLAY(s PLACING p FROM n [FOR m]) (was 42883: function overlay does not exist)
QUERIES += ["SELECT s, overlay(s PLACING 'xy' FROM 2), overlay(s PLACING 'xy' FROM 2 FOR 0), overlay(s PLACING 'xy' FROM 1 FOR -2),"
            " overlay(s PLACING 'xy' FROM 10), overlay(s PLACING NULL FROM 1), overlay(s PLACING 'x' FROM i4) FROM fa",
            "SELECT overlay('abc' PLACING 'xy' FROM 0) FROM one"]
# sha224 .. sha512 of bytea (was 42883)
QUERIES.append("SELECT s, sha224(s::bytea), sha256(s::bytea), sha384(s::bytea), sha512(s::bytea), sha256('') FROM fa")
# encode(bytea, 'hex' | 'base64') (was 42883; base64 lines of 76 characters); a computed text
# cast to bytea is byteain: '\x' + hex digits are bytes (was: the text's own bytes, a wrong answer)
QUERIES += ["SELECT s, encode(s::bytea, 'hex'), encode(('\\x' || repeat('1234567890abcdef0001', 7))::bytea, 'base64'),"
            " encode(('\\x' || repeat('00ff', i4))::bytea, 'BASE64'), encode(NULL::bytea, 'hex') FROM fa",
            "SELECT s, ('\\x' || repeat('0a 1B', i4))::bytea, (s || 'x')::bytea,"
            " decode(encode(('\\x' || repeat('1234567890abcdef0001', 7))::bytea, 'hex'), 'hex') FROM fa"]
BYTEA_ERRORS = ["SELECT ('\\x' || s)::bytea FROM fa WHERE s = 'a'", "SELECT encode(s::bytea, 'foo') FROM fa"]
QUERIES += BYTEA_ERRORS
CHR_ERRORS = ["SELECT chr(0) FROM one", "SELECT chr(-1) FROM one", "SELECT chr(55296) FROM one", "SELECT chr(1114112) FROM one"]
QUERIES += CHR_ERRORS

# queries that fail in both (the same SQLSTATE is expected)
EXPECTED_ERRORS = {*POWER_ERRORS, *WIDTH_BUCKET_ERRORS, *CHR_ERRORS, *BYTEA_ERRORS, "SELECT overlay('abc' PLACING 'xy' FROM 0) FROM one", *UNICODE_ERRORS, *REGEX_ERRORS, "SELECT s::uuid FROM uubad", "SELECT id FROM arr WHERE generate_series(1, 2) > id"}


def _norm(v: object) -> object:
    if isinstance(v, Decimal):
        return v.normalize() if v.is_finite() else v
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        rows = [tuple(_norm(v) for v in r) for r in conn.execute(sql).fetchall()]
        return sorted(rows, key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "functions-", "fn", SETUP, text_loaded("interval")) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert not isinstance(expected, str) or sql in EXPECTED_ERRORS, f"the reference rejects the query: {expected}"
    assert _rows(mz, sql) == expected


def test_insert_select_srf(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """INSERT INTO t SELECT generate_series(...): the rows Postgres inserts."""
    for conn in both:
        conn.execute("CREATE TABLE srf_ins (x int)")
        conn.execute("INSERT INTO srf_ins SELECT generate_series(1, 2000)")
    mz, pg = both
    q = "SELECT count(*), sum(x), min(x), max(x) FROM srf_ins"
    assert _rows(mz, q) == _rows(pg, q)


def test_several_srfs_in_one_select_list_are_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """Postgres 10+ runs them in lock step (zipped, the shorter padded with NULLs); we refuse
    rather than answer with the cross product."""
    mz, _ = both
    assert _rows(mz, "SELECT generate_series(1, 2), generate_series(1, 3) FROM one") == "error 0A000"


def _text_rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    """Rows as the server's own text output (no client-side decoding of floats and bytea)."""
    from psycopg.types.string import TextLoader

    cur = conn.cursor()
    for name in ("float4", "float8", "bytea"):
        cur.adapters.register_loader(name, TextLoader)
    return sorted(cur.execute(sql).fetchall(), key=repr)


OUTPUT_SETTINGS = [
    ("SET extra_float_digits = 0", "SELECT f8, sqrt(abs(f8)), cbrt(f8), f4, f4 / 3, exp(ln(abs(f8) + 1)),"
     " 'NaN'::float8, (-0.0)::float8, (0 * -1.0)::float8, 1e-7::float8 FROM fa"),
    ("SET extra_float_digits = -3", "SELECT f8, sqrt(abs(f8)), f4 / 3, ARRAY[f8 / 7] FROM fa"),
    ("SET extra_float_digits = 3", "SELECT f8, sqrt(abs(f8)), f4 / 3 FROM fa"),
    ("SET bytea_output = escape", "SELECT E'De\\\\000dBeEf'::bytea, E'De\\\\123dBeEf'::bytea, E'\\\\xDe00BeEf'::bytea,"
     " E'\\\\x De Ad Be Ef '::bytea, 'a\\\\\\\\b'::bytea, ARRAY['\\x00ff'::bytea] FROM one"),
    ("SET bytea_output = hex", "SELECT E'De\\\\000dBeEf'::bytea, 'DeAdBeEf'::bytea FROM one"),
]


@pytest.mark.parametrize("setting, sql", OUTPUT_SETTINGS)
def test_output_settings(both: tuple[psycopg.Connection, psycopg.Connection], setting: str, sql: str) -> None:
    """extra_float_digits (<= 0: %.{15 + n}g / %.{6 + n}g) and bytea_output (hex | escape)
    change how results print; bytea input reads the escape format (\\ooo, \\\\)."""
    mz, pg = both
    try:
        for conn in both:
            conn.execute(setting)
        assert _text_rows(mz, sql) == _text_rows(pg, sql)
    finally:
        for conn in both:
            conn.execute("RESET extra_float_digits")
            conn.execute("RESET bytea_output")


def test_insert_default_values(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """INSERT … DEFAULT VALUES: one row of defaults, also into a table of no columns."""
    for conn in both:
        conn.execute("CREATE TABLE dv_none ()")
        conn.execute("CREATE TABLE dv_some (a int DEFAULT 3, b text)")
        conn.execute("INSERT INTO dv_none DEFAULT VALUES")
        conn.execute("INSERT INTO dv_some DEFAULT VALUES")
    mz, pg = both
    for q in ("SELECT count(*) FROM dv_none", "SELECT * FROM dv_some"):
        assert _rows(mz, q) == _rows(pg, q)


def test_empty_row_in_a_result_is_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """ROW() (no fields) cannot be shipped from Spark: a clean 0A000, never an internal error."""
    mz, _ = both
    assert _rows(mz, "SELECT ROW() FROM one") == "error 0A000"


def test_numeric_power_overflow_is_an_error(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """1.234 ^ 5678 has 518 digits: Postgres' numeric holds it, Materialize's (39 digits) fails
    with 22003; never NULL."""
    mz, _ = both
    assert _rows(mz, "SELECT 1.234 ^ 5678 FROM one") == "error 22003"
