"""Compares what an engine read from Mink's flights table with the Parquet file
its records came from (shared by the engine scripts of compat/engines).

The table (SPEC "flights") is a `json` table of the first `rows` rows of the
flight records (internal/flights): columns date (timestamptz), delay (long),
distance (long), origin and destination (string), all optional, in no
particular order (the topic has several partitions). The source is read with
pyarrow, only its first `rows` rows. A row is compared as the tuple
(date, delay, distance, origin, destination) with date as integer
microseconds since the epoch (UTC), so neither a time zone library nor a
float takes part, and the rows as a multiset (duplicates count). The
aggregate by origin is (count of rows, sum of delay, max of distance) per
origin, a null origin being a group of its own, as SQL's GROUP BY makes it.
"""

import datetime
from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc

COLUMNS = ("date", "delay", "distance", "origin", "destination")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_ONE_US = datetime.timedelta(microseconds=1)


def source_table(path, rows):
    """The first `rows` rows of the Parquet file at path (a pyarrow.Table of
    COLUMNS), reading no more row batches than needed."""
    import pyarrow.parquet as pq

    batches, n = [], 0
    f = pq.ParquetFile(path)
    for b in f.iter_batches(batch_size=min(max(rows, 1), 65536), columns=list(COLUMNS)):
        batches.append(b.slice(0, rows - n))
        n += batches[-1].num_rows
        if n >= rows:
            break
    if n < rows:
        raise ValueError("%s holds %d rows, fewer than %d" % (path, n, rows))
    return pa.Table.from_batches(batches, schema=f.schema_arrow)


def micros(v):
    """Microseconds since the epoch (an int) of a timestamp value an engine
    returned: an int already in µs, a pandas Timestamp (exact, from its
    nanoseconds) or a time-zone aware datetime. A naive datetime is refused:
    which zone it means is the engine's guess, not a value."""
    if v is None or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    ns = getattr(v, "value", None)  # pandas.Timestamp: int nanoseconds since the epoch, UTC
    if isinstance(ns, int) and type(v).__name__ == "Timestamp":
        if ns % 1000:
            raise ValueError("timestamp %r has nanoseconds" % v)
        return ns // 1000
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise TypeError("naive datetime %r for a timestamptz" % v)
        return (v - EPOCH) // _ONE_US
    raise TypeError("not a timestamp: %r (%s)" % (v, type(v).__name__))


def _check(row):
    """A normalized row (date µs, delay, distance, origin, destination), its
    types checked so that a float or a number as text cannot pass as equal."""
    d, delay, dist, o, dst = row
    d = micros(d)
    for name, v in (("delay", delay), ("distance", dist)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise TypeError("%s %r is a %s, not an integer" % (name, v, type(v).__name__))
    for name, v in (("origin", o), ("destination", dst)):
        if v is not None and not isinstance(v, str):
            raise TypeError("%s %r is a %s, not a string" % (name, v, type(v).__name__))
    return (d, delay, dist, o, dst)


def arrow_rows(table):
    """The rows of a pyarrow.Table holding COLUMNS (others are ignored) as
    normalized tuples; date must be an arrow timestamp with a time zone (UTC
    or +00:00; every zone means the same instant) or a naive one from the
    source, whose timestamps mean UTC."""
    cols = []
    for name in COLUMNS:
        col = table.column(name)
        if name == "date":
            t = col.type
            if not pa.types.is_timestamp(t):
                raise TypeError("date is %s, not a timestamp" % t)
            if t.unit != "us":
                col = pc.cast(col, pa.timestamp("us", tz=t.tz))  # safe cast: fails rather than truncates
            col = pc.cast(col, pa.int64())
        cols.append(col.to_pylist())
    return [_check(r) for r in zip(*cols)]


def tz_aware(table):
    """Refuses a naive date column where Iceberg's timestamptz must arrive."""
    t = table.column("date").type
    if not pa.types.is_timestamp(t) or t.tz is None:
        raise TypeError("date arrived as %s, not a timestamp with a time zone (Iceberg timestamptz)" % t)
    return table


def compare_rows(got, want):
    """Compares the engine's rows (tuples of COLUMNS, date in any form micros
    takes) with the source's as multisets. Returns (ok, detail)."""
    g = Counter(_check(tuple(r)) for r in got)
    w = Counter(want)
    missing = w - g
    extra = g - w
    n_got, n_want = sum(g.values()), sum(w.values())
    ok = not missing and not extra
    detail = "%d rows read, %d in the source's first rows; %d missing, %d unexpected" % (
        n_got, n_want, sum(missing.values()), sum(extra.values()))
    if ok:
        detail += "; every row equal (date as µs, delay, distance, origin, destination)"
    else:
        first = ["missing %r" % (r,) for r in list(missing.elements())[:3]]
        first += ["unexpected %r" % (r,) for r in list(extra.elements())[:3]]
        detail += "; first: " + "; ".join(first[:3])
    return ok, detail


def arrow_aggregate(table):
    """{origin: (count of rows, sum of delay, max of distance)} of a
    pyarrow.Table, computed by pyarrow (Table.group_by)."""
    agg = table.select(["origin", "delay", "distance"]).group_by("origin").aggregate(
        [([], "count_all"), ("delay", "sum"), ("distance", "max")])
    out = {}
    for o, n, s, m in zip(*(agg.column(c).to_pylist() for c in ("origin", "count_all", "delay_sum", "distance_max"))):
        out[o] = (n, s, m)
    return out


def _integral(x):
    """A SQL sum of longs as a Python int: DuckDB's HUGEINT arrives through
    arrow as a decimal(38, 0), an integral decimal.Decimal. Anything else
    (a float above all) stays as it is, and so differs in type."""
    import decimal

    if isinstance(x, decimal.Decimal) and x == x.to_integral_value():
        return int(x)
    return x


def compare_aggregate(got, want):
    """Compares {origin: (count, sum delay, max distance)} of the engine with
    the source's. Returns (ok, detail)."""
    got = {o: tuple(_integral(x) for x in v) for o, v in got.items()}
    diffs = []
    for o in sorted(set(got) | set(want), key=lambda x: (x is None, x or "")):
        if got.get(o) != want.get(o) or any(type(a) is not type(b) for a, b in zip(got.get(o) or (), want.get(o) or ())):
            diffs.append("%r: got %r want %r" % (o, got.get(o), want.get(o)))
    ok = not diffs
    detail = "%d origins, %d in the source (%d rows); %d differ" % (
        len(got), len(want), sum(v[0] for v in want.values()), len(diffs))
    if diffs:
        detail += "; first: " + "; ".join(diffs[:3])
    else:
        detail += "; count(*), sum(delay), max(distance) equal for each"
    return ok, detail


class Source:
    """The SPEC's flights entry with its source rows and aggregate, read once."""

    def __init__(self, spec):
        self.table_name = spec["table"]
        self.rows = int(spec["rows"])
        self.path = spec["parquet"]
        self._table = None

    def table(self):
        if self._table is None:
            self._table = source_table(self.path, self.rows)
        return self._table

    def want_rows(self):
        return arrow_rows(self.table())

    def want_aggregate(self):
        return arrow_aggregate(self.table())

    def check_rows(self, got):
        return compare_rows(got, self.want_rows())

    def check_aggregate(self, got):
        return compare_aggregate(got, self.want_aggregate())


    def rows_check(self):
        """The name of the rows check."""
        import os

        return "flights: every row equals the first %d rows of %s" % (self.rows, os.path.basename(self.path))


AGG_CHECK = "flights: aggregate by origin"
