"""PyIceberg against Mink (make compat's engine contract: SPEC.json in, JSON
lines out). It configures the catalog with the block README shows the user
(compat/engines/pyiceberg.conf.md, placeholders substituted) and compares
every value it reads with the USGS GeoJSON feed: a scan with a row filter and
a projection, the whole table, time travel by snapshot id, by a
consumer-group tag and by timestamp, and the ~dlq table; with "flights" in
the spec, the flights table's rows and an aggregate by origin with the Parquet
file (compat/engines/flights_compare.py).

Usage: python compat/engines/pyiceberg.py SPEC.json
"""

import os
import sys

# This file is named like the package it tests: keep its folder off the import
# path while importing PyIceberg, then add it for the shared comparison module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
import json  # noqa: E402

import pyiceberg  # noqa: E402
from pyiceberg.expressions import And, GreaterThanOrEqual, IsNull, Not  # noqa: E402

sys.path.append(_HERE)
import flights_compare as fc  # noqa: E402
import usgs_compare as uc  # noqa: E402

PROJECTION = ("id", "properties.mag", "properties.place", "properties.time", "geometry.coordinates")
MAG_MIN = 2.5


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    features = uc.load_features(spec["usgs"])
    rep = uc.Reporter("pyiceberg", pyiceberg.__version__)

    readme = uc.load_conf_block(os.path.join(_HERE, "pyiceberg.conf.md"), "python")
    rep.check("README shows compat/engines/pyiceberg.conf.md", lambda: uc.readme_shows(readme, "python"))
    block = readme.replace("http://127.0.0.1:8181", spec["uri"]).replace("CLIENT_ID:SECRET", spec["credential"])
    env = {}
    state = {}

    def connect():
        exec(compile(block, "pyiceberg.conf.md", "exec"), env)  # the README block, as the user runs it
        state["table"] = env["cat"].load_table(spec["tables"]["earthquakes"])
        t = state["table"]
        return True, "loaded %s: %d snapshots, refs %s" % (spec["tables"]["earthquakes"], len(t.metadata.snapshots), sorted(t.refs()))

    if not rep.check("catalog: README configuration, load table", connect):
        return
    table = state["table"]

    def filtered_on(t):
        # properties.mag >= 2.5 (a null mag is not >= 2.5), five columns.
        flt = And(Not(IsNull("properties.mag")), GreaterThanOrEqual("properties.mag", MAG_MIN))
        got = t.scan(row_filter=flt, selected_fields=PROJECTION).to_arrow()
        want = [i for i, f in features.items() if f["properties"].get("mag") is not None and f["properties"]["mag"] >= MAG_MIN]
        return uc.compare(got, features, want, columns=PROJECTION)

    def filtered():
        return filtered_on(table)

    rep.check("scan with filter properties.mag >= %s and projection of %d columns" % (MAG_MIN, len(PROJECTION)), filtered)

    def server_planned():
        # The same scan planned by Mink (the REST spec's planTableScan, which
        # /v1/config advertises): PyIceberg does so when the catalog has
        # scan-planning-mode=server (its default is client-side planning).
        from pyiceberg.catalog import load_catalog

        props = dict(env["cat"].properties)
        props["scan-planning-mode"] = "server"
        cat = load_catalog("mink-server-planning", **props)
        if not cat.supports_server_side_planning():
            return False, "Mink's /v1/config does not advertise POST .../plan"
        plans = []
        plan_scan = cat.plan_scan

        def counted(*args, **kwargs):
            tasks = plan_scan(*args, **kwargs)
            plans.append(len(tasks))
            return tasks

        cat.plan_scan = counted
        t = cat.load_table(spec["tables"]["earthquakes"])
        ok, detail = filtered_on(t)
        if not plans:
            return False, "PyIceberg planned the scan itself; " + detail
        return ok, "Mink planned %d file tasks; %s" % (sum(plans), detail)

    rep.check("same scan, planned by Mink (scan-planning-mode=server)", server_planned)

    def full():
        got = table.scan().to_arrow()
        return uc.compare(got, features, list(features))

    rep.check("scan of every column, current snapshot", full)

    for snap in spec.get("snapshots", []):
        ref, as_of = snap.get("ref"), snap.get("as_of_ms")
        if ref is not None and ref.lstrip("-").isdigit():
            name = "time travel: snapshot id %s" % ref

            def sid(ref=ref):
                return int(ref)
        elif ref is not None:
            name = "time travel: tag %s" % ref

            def sid(ref=ref):
                s = table.snapshot_by_name(ref)
                if s is None:
                    raise LookupError("no ref %r (refs %s)" % (ref, sorted(table.refs())))
                return s.snapshot_id
        else:
            name = "time travel: as of %d ms" % as_of

            def sid(as_of=as_of):
                s = table.snapshot_as_of_timestamp(as_of)
                if s is None:
                    raise LookupError("no snapshot at or before %d ms" % as_of)
                return s.snapshot_id

        def travel(sid=sid, ids=snap["ids"]):
            got = table.scan(snapshot_id=sid()).to_arrow()
            return uc.compare(got, features, ids)

        rep.check(name, travel)

    if spec.get("dlq"):
        def dlq():
            t = env["cat"].load_table(spec["dlq"]["table"])
            got = t.scan(selected_fields=("value", "error")).to_arrow()
            ok, detail = uc.compare_dlq(got.column("value").to_pylist(), spec["dlq"]["values"])
            errs = [e for e in got.column("error").to_pylist() if not e]
            if errs:
                ok, detail = False, detail + "; %d rows without an error" % len(errs)
            return ok, detail

        rep.check("dead letters: %s" % spec["dlq"]["table"], dlq)

    if spec.get("flights"):
        src = fc.Source(spec["flights"])
        scanned = {}

        def flights_table():
            if "t" not in scanned:
                t = env["cat"].load_table(src.table_name)
                scanned["t"] = fc.tz_aware(t.scan(selected_fields=fc.COLUMNS).to_arrow())
            return scanned["t"]

        rep.check(src.rows_check(), lambda: src.check_rows(fc.arrow_rows(flights_table())))
        # PyIceberg has no SQL: the aggregate is pyarrow's, over the scan.
        rep.check(fc.AGG_CHECK + " (pyarrow group_by over the scan)",
                  lambda: src.check_aggregate(fc.arrow_aggregate(flights_table())))


if __name__ == "__main__":
    main()
