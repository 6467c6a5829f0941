"""Compares rows an engine read from Mink with the USGS GeoJSON feed they came
from, value by value (shared by compat/engines/pyiceberg.py and duckdb.py).

Rows arrive as a pyarrow.Table whose columns follow the Iceberg schema of
devenv/earthquakes.schema.json (any subset of it, nested as structs). The
expected value of each column is taken from the feature's GeoJSON exactly as
Mink's json format decodes it: numbers as doubles or ints, epoch milliseconds
as a timestamptz (compared in microseconds since the epoch, so no time zone
library takes part), strings as they are, and geometry.coordinates as a list
of doubles. Floats are compared exactly (Python's json and Go's strconv both
round a decimal literal to the nearest double).
"""

import json
import os
import time

import pyarrow as pa
import pyarrow.compute as pc

# Leaf columns of the earthquakes schema: dotted path -> Iceberg type.
COLUMNS = {
    "id": "string",
    "type": "string",
    "properties.mag": "double",
    "properties.place": "string",
    "properties.time": "timestamptz",
    "properties.updated": "timestamptz",
    "properties.tz": "int",
    "properties.url": "string",
    "properties.detail": "string",
    "properties.felt": "int",
    "properties.cdi": "double",
    "properties.mmi": "double",
    "properties.alert": "string",
    "properties.status": "string",
    "properties.tsunami": "int",
    "properties.sig": "int",
    "properties.net": "string",
    "properties.code": "string",
    "properties.ids": "string",
    "properties.sources": "string",
    "properties.types": "string",
    "properties.nst": "int",
    "properties.dmin": "double",
    "properties.rms": "double",
    "properties.gap": "double",
    "properties.magType": "string",
    "properties.type": "string",
    "properties.title": "string",
    "geometry.type": "string",
    "geometry.coordinates": "list<double>",
}


def load_features(path):
    """Returns the feed's features by event id (a dict of GeoJSON features)."""
    with open(path, encoding="utf-8") as f:
        feats = json.load(f)["features"]
    out = {}
    for feat in feats:
        if feat["id"] in out:
            raise ValueError("duplicate event id %r in %s" % (feat["id"], path))
        out[feat["id"]] = feat
    return out


def _get(obj, path):
    for part in path.split("."):
        if obj is None:
            return None
        obj = obj.get(part)
    return obj


def expected_value(feat, path):
    """The value column `path` holds for GeoJSON feature `feat`, normalized as
    rows_of normalizes what an engine returned."""
    v = _get(feat, path)
    if v is None:
        return None
    kind = COLUMNS[path]
    if kind == "double":
        return float(v)
    if kind == "int":
        return int(v)
    if kind == "timestamptz":
        return int(v) * 1000  # epoch ms -> epoch µs
    if kind == "list<double>":
        return [float(x) for x in v]
    return v


def _flatten(table):
    """Flattens struct columns of a pyarrow.Table into dotted leaf columns."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def rows_of(table):
    """Returns (rows, columns): each row a dict of dotted path -> normalized
    value (timestamps as epoch µs ints, so the engine's session time zone does
    not matter), and the dotted leaf columns the table holds."""
    table = _flatten(table)
    cols = {}
    for name in table.column_names:
        col = table.column(name)
        t = col.type
        if pa.types.is_timestamp(t):
            if t.tz is None and COLUMNS.get(name) == "timestamptz":
                raise TypeError("column %s is %s, not a timestamp with a time zone (Iceberg timestamptz)" % (name, t))
            if t.unit != "us":
                col = pc.cast(col, pa.timestamp("us", tz=t.tz))
            col = pc.cast(col, pa.int64())
        cols[name] = col.to_pylist()
    n = table.num_rows
    rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
    return rows, list(table.column_names)


def compare(table, features, want_ids, columns=None):
    """Compares every value of `table` (a pyarrow.Table read by an engine) with
    the features whose ids are `want_ids`. columns: the dotted leaf columns the
    table must hold exactly (default: all of COLUMNS). Returns (ok, detail)."""
    columns = list(columns or COLUMNS)
    rows, got_cols = rows_of(table)
    problems = []
    # Mink's _kafka metadata column (partition, offset, timestamp, key,
    # headers) may come along; its key must be the event id (the feed's key).
    data_cols = [c for c in got_cols if not c.startswith("_kafka.")]
    if sorted(data_cols) != sorted(columns):
        problems.append("columns: missing %s, unexpected %s" % (
            sorted(set(columns) - set(data_cols)), sorted(set(data_cols) - set(columns))))
        columns = [c for c in columns if c in got_cols]
    key_col = "_kafka.key" in got_cols
    want = set(want_ids)
    seen = {}
    dups = 0
    for r in rows:
        rid = r.get("id")
        if rid in seen:
            dups += 1
        seen[rid] = r
    missing = sorted(want - set(seen))
    extra = sorted(set(seen) - want, key=str)
    diffs = 0
    first = []
    compared = 0
    for rid in sorted(want & set(seen)):
        r = seen[rid]
        feat = features[rid]
        for c in columns:
            compared += 1
            w = expected_value(feat, c)
            g = r[c]
            if g != w or type(g) is not type(w):
                diffs += 1
                if len(first) < 5:
                    first.append("%s %s: got %r want %r" % (rid, c, g, w))
        if key_col:
            compared += 1
            key = r["_kafka.key"]  # binary (key format raw) or string
            if (key.decode("utf-8", "replace") if isinstance(key, bytes) else key) != rid:
                diffs += 1
                if len(first) < 5:
                    first.append("%s _kafka.key: got %r" % (rid, r["_kafka.key"]))
    if dups:
        problems.append("%d duplicate rows" % dups)
    if missing:
        problems.append("%d missing ids (first %s)" % (len(missing), missing[:3]))
    if extra:
        problems.append("%d unexpected ids (first %s)" % (len(extra), extra[:3]))
    if diffs:
        problems.append("%d values differ: %s" % (diffs, "; ".join(first)))
    ok = not problems and len(rows) == len(want)
    detail = "%d rows, %d values compared with the GeoJSON" % (len(rows), compared)
    if problems:
        detail += "; " + "; ".join(problems)
    return ok, detail


def compare_dlq(values, want):
    """Compares the raw values (bytes or str) of a ~dlq table with the SPEC's
    dead-letter values as a multiset. Returns (ok, detail)."""
    got = sorted(v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v) for v in values)
    want = sorted(want)
    if got == want:
        return True, "%d dead letters, every raw value equal" % len(got)
    return False, "got %d dead letters %r, want %d %r" % (len(got), got[:3], len(want), want[:3])


def load_conf_block(path, lang):
    """Returns the text of the first ```lang fenced block of a .conf.md file:
    the configuration README shows the user, which the engine scripts run."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("```" + lang + "\n") + len(lang) + 4
    end = text.index("```", start)
    return text[start:end]


def readme_shows(block, lang):
    """Checks that README.md (the repository's, two folders up) shows `block`
    as a fenced block of its own. Returns (ok, detail)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if ("```" + lang + "\n" + block + "```") in text:
        return True, "README.md shows the block the checks run"
    return False, "README.md does not show this block verbatim:\n" + block


class Reporter:
    """Prints the contract's JSON lines: emit() one per check, timed."""

    def __init__(self, engine, version):
        print(json.dumps({"engine": engine, "version": version}), flush=True)
        self.started = time.monotonic()

    def check(self, name, fn):
        """Runs fn() -> (ok, detail) and prints its line; an exception is a
        failed check whose detail is the error."""
        t0 = time.monotonic()
        try:
            ok, detail = fn()
        except Exception as e:  # a failing engine call is a failed check
            ok, detail = False, "%s: %s" % (type(e).__name__, str(e)[:800])
        print(json.dumps({"check": name, "ok": bool(ok), "detail": detail,
                          "seconds": round(time.monotonic() - t0, 3)}), flush=True)
        return ok
