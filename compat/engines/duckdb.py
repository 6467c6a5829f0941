"""DuckDB with its iceberg extension against Mink (make compat's engine
contract: SPEC.json in, JSON lines out). It runs the block README shows the
user (compat/engines/duckdb.conf.md, placeholders substituted) and compares
every value it reads with the USGS GeoJSON feed: SELECT of every column, a
SELECT with a WHERE and a projection, time travel by snapshot id and by
timestamp (AT (VERSION => …), AT (TIMESTAMP => …)), and the ~dlq table;
with "flights" in the spec, the flights table's rows and a GROUP BY origin
with the Parquet file (compat/engines/flights_compare.py).

The extensions come from their PyPI packages (duckdb-extension-iceberg,
-httpfs, -avro, the engine's own version): they are LOADed by path, with
autoinstall and autoload of known extensions off, so nothing is downloaded at
run time. DuckDB's iceberg extension cannot read a branch or tag by name
(AT (VERSION => …) takes a snapshot id only), so a `group.<name>` tag is read
by the snapshot id Mink's catalog gives for it in the table's refs, which the
script looks up over the REST API the same way.

Usage: python compat/engines/duckdb.py SPEC.json
"""

import os
import sys

# This file is named like the package it tests: keep its folder off the import
# path while importing DuckDB, then add it for the shared comparison module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
import importlib.util  # noqa: E402
import json  # noqa: E402

import duckdb  # noqa: E402

sys.path.append(_HERE)
import flights_compare as fc  # noqa: E402
import usgs_compare as uc  # noqa: E402

PROJECTION = ("id", "properties.mag", "properties.place", "properties.time", "geometry.coordinates")
MAG_MIN = 2.5


def extension_path(name):
    """Path of extension `name` in its PyPI package for this DuckDB version."""
    spec = importlib.util.find_spec("duckdb_extension_" + name)
    if spec is None or spec.origin is None:
        raise RuntimeError("PyPI package duckdb-extension-%s is not installed" % name)
    path = os.path.join(os.path.dirname(spec.origin), "extensions", "v" + duckdb.__version__, name + ".duckdb_extension")
    if not os.path.exists(path):
        raise RuntimeError("%s missing: the extension package's version must be DuckDB's (%s)" % (path, duckdb.__version__))
    return path


def quote_table(name):
    """ns.table -> mink."ns"."table" (a ~dlq name needs the quotes)."""
    ns, tbl = name.rsplit(".", 1)
    return 'mink."%s"."%s"' % (ns.replace('"', '""'), tbl.replace('"', '""'))


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    features = uc.load_features(spec["usgs"])
    rep = uc.Reporter("duckdb", "%s (iceberg extension from PyPI duckdb-extension-iceberg)" % duckdb.__version__)

    client_id, secret = spec["credential"].split(":", 1)
    readme = uc.load_conf_block(os.path.join(_HERE, "duckdb.conf.md"), "sql")
    rep.check("README shows compat/engines/duckdb.conf.md", lambda: uc.readme_shows(readme, "sql"))
    block = (readme.replace("http://127.0.0.1:8181", spec["uri"])
             .replace("'CLIENT_ID'", "'%s'" % client_id.replace("'", "''"))
             .replace("'SECRET'", "'%s'" % secret.replace("'", "''")))

    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    table = quote_table(spec["tables"]["earthquakes"])
    cols = "*"

    def attach():
        for name in ("httpfs", "avro", "iceberg"):
            con.execute("LOAD '%s'" % extension_path(name).replace("'", "''"))
        con.execute(block)  # the README block, as the user runs it
        ns, tbl = spec["tables"]["earthquakes"].rsplit(".", 1)
        names = con.execute("SELECT schema, name FROM (SHOW ALL TABLES) WHERE database = 'mink'").fetchall()
        if (ns, tbl) not in names:
            return False, "ATTACH listed %d tables, not %s" % (len(names), spec["tables"]["earthquakes"])
        return True, "ATTACH listed %d tables, %s among them" % (len(names), spec["tables"]["earthquakes"])

    if not rep.check("ATTACH with the README block, list tables", attach):
        return

    def select(sql, want, columns=None):
        got = con.execute(sql).to_arrow_table()
        return uc.compare(got, features, want, columns=columns)

    def filtered():
        sql = ("SELECT id, properties.mag AS \"properties.mag\", properties.place AS \"properties.place\", "
               "properties.time AS \"properties.time\", geometry.coordinates AS \"geometry.coordinates\" "
               "FROM %s WHERE properties.mag >= %s" % (table, MAG_MIN))
        want = [i for i, f in features.items() if f["properties"].get("mag") is not None and f["properties"]["mag"] >= MAG_MIN]
        return select(sql, want, PROJECTION)

    rep.check("SELECT with WHERE properties.mag >= %s and %d columns" % (MAG_MIN, len(PROJECTION)), filtered)
    rep.check("SELECT * (every column), current snapshot", lambda: select("SELECT %s FROM %s" % (cols, table), list(features)))

    refs = {}

    def tag_snapshot(ref):
        # DuckDB has no AT (TAG => …): the tag's snapshot id from the catalog.
        if not refs:
            refs.update(load_refs(spec))
        if ref not in refs:
            raise LookupError("no ref %r (refs %s)" % (ref, sorted(refs)))
        return refs[ref]

    for snap in spec.get("snapshots", []):
        ref, as_of = snap.get("ref"), snap.get("as_of_ms")
        if ref is not None and ref.lstrip("-").isdigit():
            name = "time travel: AT (VERSION => %s)" % ref
            at = lambda ref=ref: "AT (VERSION => %d)" % int(ref)  # noqa: E731
        elif ref is not None:
            name = "time travel: tag %s via AT (VERSION => its snapshot id)" % ref
            at = lambda ref=ref: "AT (VERSION => %d)" % tag_snapshot(ref)  # noqa: E731
        else:
            name = "time travel: AT (TIMESTAMP => %d ms)" % as_of
            # make_timestamp takes µs since the epoch: a TIMESTAMP (UTC), no zone involved.
            at = lambda as_of=as_of: "AT (TIMESTAMP => make_timestamp(%d))" % (as_of * 1000)  # noqa: E731
        rep.check(name, lambda at=at, ids=snap["ids"]: select("SELECT * FROM %s %s" % (table, at()), ids))

    if spec.get("dlq"):
        def dlq():
            got = con.execute("SELECT value, error FROM %s" % quote_table(spec["dlq"]["table"])).fetchall()
            ok, detail = uc.compare_dlq([r[0] for r in got], spec["dlq"]["values"])
            if any(not r[1] for r in got):
                ok, detail = False, detail + "; rows without an error"
            return ok, detail

        rep.check("dead letters: SELECT from %s" % spec["dlq"]["table"], dlq)

    if spec.get("flights"):
        src = fc.Source(spec["flights"])
        flights = quote_table(src.table_name)

        def flights_rows():
            got = con.execute("SELECT %s FROM %s" % (", ".join(fc.COLUMNS), flights)).to_arrow_table()
            return src.check_rows(fc.arrow_rows(fc.tz_aware(got)))

        def flights_aggregate():
            rows = con.execute("SELECT origin, count(*), sum(delay), max(distance) FROM %s GROUP BY origin"
                               % flights).fetchall()
            return src.check_aggregate({r[0]: tuple(r[1:]) for r in rows})

        rep.check(src.rows_check(), flights_rows)
        rep.check(fc.AGG_CHECK + ": SELECT origin, count(*), sum(delay), max(distance) ... GROUP BY origin",
                  flights_aggregate)


def load_refs(spec):
    """The table's refs (name -> snapshot id) from Mink's REST catalog: an
    OAuth2 client-credentials token, then loadTable."""
    import urllib.parse
    import urllib.request

    client_id, secret = spec["credential"].split(":", 1)
    body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": client_id,
                                   "client_secret": secret, "scope": "catalog"}).encode()
    with urllib.request.urlopen(spec["uri"] + "/v1/oauth/tokens", body) as r:
        token = json.load(r)["access_token"]
    ns, tbl = spec["tables"]["earthquakes"].rsplit(".", 1)
    url = "%s/v1/namespaces/%s/tables/%s" % (spec["uri"], urllib.parse.quote(ns, safe=""), urllib.parse.quote(tbl, safe=""))
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        meta = json.load(r)["metadata"]
    return {k: v["snapshot-id"] for k, v in meta.get("refs", {}).items()}


if __name__ == "__main__":
    main()
