"""Spark 4 (pyspark from PyPI, Iceberg's Spark runtime and AWS bundle from
Maven Central) reading Mink through the REST catalog and the S3 API, as
compat/engines/spark.conf.md tells users to configure it.

Usage: spark.py SPEC.json (compat/engines/README.md). Besides the batch
checks (SELECT of the current snapshot, FOR VERSION AS OF a snapshot id and
a consumer-group tag, FOR TIMESTAMP AS OF, the dead-letter table, and with
"flights" the flights table's rows and a GROUP BY origin compared with the
Parquet file by compat/engines/flights_compare.py), a spec with "stream" runs
a Structured Streaming check:

  "stream": {"table": "compat.stream",
             "produce": ["python", ".../produce.py", "stream", "--bootstrap", "...", "--topic", "...", ...],
             "pause_s": 12}

The table is a `string` table (column `value`) of the topic produce.py
writes to; records it held before (an earlier run's) are left out of the
comparison. The script starts a stream (readStream.format("iceberg")) into a
JSON file sink with a checkpoint, runs the producer (one JSON line per
acknowledged record: p, o, v), stops the stream part way, lets Mink's writer
commit, replace tail files and assemble meanwhile, restarts the stream from
its checkpoint (after pause_s seconds, 12 unless said), and at the end compares the sink's rows with the records
produced: each (partition, offset, value) exactly once.

Stdout: one JSON line per check; stderr: logs.
"""

import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import usgs_compare as uc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def log(*a):
    print("spark.py:", *a, file=sys.stderr, flush=True)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def readme_conf(uri, credential):
    """The fenced block of spark.conf.md, filled in, as (key, value) pairs."""
    block = uc.load_conf_block(os.path.join(HERE, "spark.conf.md"), "properties")
    block = block.replace("http://127.0.0.1:8181", uri).replace("CLIENT_ID:SECRET", credential)
    pairs = []
    for line in block.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        k, v = line.split(None, 1)
        pairs.append((k, v.strip()))
    return pairs


def jars():
    d = subprocess.run([os.path.join(ROOT, "scripts", "ensure-maven"), "spark"],
                       check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    js = sorted(glob.glob(os.path.join(d, "*.jar")))
    if not js:
        raise SystemExit("ensure-maven spark: no jars in " + d)
    return js


def ident(name):
    """Spark's identifier of a Mink table NS.NAME in catalog mink."""
    parts = name.split(".")
    return "mink." + ".".join("`%s`" % p.replace("`", "``") for p in parts)


class Checker:
    def __init__(self):
        self.failed = 0

    def run(self, name, fn):
        t0 = time.monotonic()
        try:
            ok, detail = fn()
        except Exception as e:  # a check that throws fails, the others still run
            ok, detail = False, "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:600] if str(e).strip() else "")
        secs = time.monotonic() - t0
        emit({"check": name, "ok": bool(ok), "detail": detail, "seconds": round(secs, 3)})
        log("%s: %s (%.1f s) %s" % (name, "ok" if ok else "FAILED", secs, detail))


# --- the earthquakes table -------------------------------------------------

def schema_props():
    with open(os.path.join(ROOT, "devenv", "earthquakes.schema.json")) as f:
        s = json.load(f)
    for fld in s["fields"]:
        if fld["name"] == "properties":
            return [(p["name"], p["type"]) for p in fld["type"]["fields"]]
    raise SystemExit("earthquakes.schema.json: no properties")


PROPS = None


def select_list():
    cols = ["id", "type"]
    for n, t in PROPS:
        c = "properties.`%s`" % n
        cols.append("unix_micros(%s)" % c if t == "timestamptz" else c)
    cols += ["geometry.type", "geometry.coordinates"]
    return ", ".join("%s AS c%d" % (c, i) for i, c in enumerate(cols))


def expected_row(feat):
    p = feat.get("properties") or {}
    row = [feat.get("id"), feat.get("type")]
    for n, t in PROPS:
        v = p.get(n)
        if v is not None:
            if t == "timestamptz":
                v = int(v) * 1000
            elif t == "double":
                v = float(v)
            elif t in ("int", "long"):
                v = int(v)
        row.append(v)
    g = feat.get("geometry") or {}
    coords = g.get("coordinates")
    row += [g.get("type"), None if coords is None else [float(c) for c in coords]]
    return row


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, float) and isinstance(b, float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


COLNAMES = None


def compare(rows, features, want_ids):
    """Compares rows (from select_list) with the features of want_ids."""
    got = {}
    dups = []
    for r in rows:
        r = [list(x) if isinstance(x, (list, tuple)) else x for x in r]
        if r[0] in got:
            dups.append(r[0])
        got[r[0]] = r
    want = set(want_ids)
    missing = sorted(want - set(got))
    extra = sorted(set(got) - want)
    diffs = []
    for i in sorted(want & set(got)):
        e = expected_row(features[i])
        g = got[i]
        for k, (x, y) in enumerate(zip(e, g)):
            if not same(x, y):
                diffs.append("%s %s: want %r got %r" % (i, COLNAMES[k], x, y))
    ok = not (missing or extra or dups or diffs)
    detail = "%d rows, %d events wanted" % (len(rows), len(want))
    if not ok:
        detail += "; %d missing %s, %d extra %s, %d duplicated %s, %d value differences %s" % (
            len(missing), missing[:3], len(extra), extra[:3], len(dups), dups[:3], len(diffs), diffs[:3])
    else:
        detail += ", every value equal to the feed's (%d columns)" % len(COLNAMES)
    return ok, detail


# --- Structured Streaming ----------------------------------------------------

def stream_check(spark, st, work):
    from pyspark.sql.functions import col

    table = ident(st["table"])
    out = os.path.join(work, "sink")
    ck = os.path.join(work, "checkpoint")
    produced = []
    failed = []
    done = threading.Event()
    procs = []

    def produce():
        p = subprocess.Popen(st["produce"], stdout=subprocess.PIPE, text=True)
        procs.append(p)
        for line in p.stdout:
            r = json.loads(line)
            if r.get("failed"):
                failed.append(r)
            elif not r.get("aborted"):
                produced.append((int(r["p"]), int(r["o"]), r["v"]))
        p.wait()
        if p.returncode:
            failed.append({"exit": p.returncode})
        done.set()

    def start():
        df = (spark.readStream.format("iceberg").load(table)
              .select(col("_kafka.partition").alias("p"), col("_kafka.offset").alias("o"), col("value").alias("v")))
        return (df.writeStream.format("json").option("path", out).option("checkpointLocation", ck)
                .trigger(processingTime="1 second").start())

    try:
        return run_stream(spark, st, out, ck, produced, failed, done, start, produce)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


def run_stream(spark, st, out, ck, produced, failed, done, start, produce):
    def rows_of(q):
        return sum(p.get("numInputRows", 0) for p in q.recentProgress)

    table = ident(st["table"])
    phases = []
    q = start()
    th = threading.Thread(target=produce, daemon=True)
    th.start()
    # First run: until about a third of the records went through (or the producer is done).
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        if q.exception():
            raise RuntimeError("stream failed: %s" % q.exception())
        if rows_of(q) >= max(1, len(produced) // 3) and len(produced) > 0 and time.monotonic() - t0 > 8:
            break
        time.sleep(0.5)
    n1 = rows_of(q)
    q.stop()
    phases.append("run 1: %d rows, %d batches" % (n1, len(q.recentProgress)))
    # Stopped: records keep arriving, Mink's writer commits, replaces tail
    # files and assembles.
    time.sleep(float(st.get("pause_s", 12)))
    q = start()
    if not done.wait(600):
        raise RuntimeError("the producer did not finish in 10 minutes")
    want = set(produced)
    # Second run, from the checkpoint: until the sink holds every record
    # (and two more batches, so that a late duplicate would show).
    first = {}
    for p, o, _ in want:
        first[p] = min(o, first.get(p, o))

    def covered():
        rows = spark.read.schema("p INT, o LONG, v STRING").json(out).collect()
        return want <= {(r["p"], r["o"], r["v"]) for r in rows}

    t0 = time.monotonic()
    seen = None
    while time.monotonic() - t0 < 180:
        if q.exception():
            raise RuntimeError("stream failed after the restart: %s" % q.exception())
        if seen is None:
            if n1 + rows_of(q) >= len(want) and covered():
                seen = len(q.recentProgress)
            else:
                time.sleep(3)
        elif len(q.recentProgress) >= seen + 2:
            break
        time.sleep(0.5)
    n2 = rows_of(q)
    q.stop()
    ops = spark.sql("SELECT operation, count(*) AS n FROM %s.snapshots GROUP BY operation ORDER BY operation" % table).collect()
    phases.append("the table's snapshots: " + ", ".join("%s %d" % (r["operation"], r["n"]) for r in ops))
    phases.append("run 2 (restarted from the checkpoint): %d rows, %d batches" % (n2, len(q.recentProgress)))
    rows = spark.read.schema("p INT, o LONG, v STRING").json(out).collect()
    # Records the table held before this producer ran (a table shared with
    # an earlier run) sit below each partition's first produced offset.
    got = {}
    before = 0
    for r in rows:
        k = (r["p"], r["o"], r["v"])
        if k[0] in first and k[1] < first[k[0]]:
            before += 1
            continue
        got[k] = got.get(k, 0) + 1
    if before:
        phases.append("%d rows of records produced before this run left out" % before)
    missing = sorted(want - set(got))
    extra = sorted(set(got) - want)
    dups = sorted(k for k, n in got.items() if n > 1)
    ok = not (missing or extra or dups or failed)
    detail = "%d records produced, %d sink rows; %s" % (len(want), len(rows), "; ".join(phases))
    if not ok:
        detail += "; %d missing %s, %d extra %s, %d more than once %s, %d producer failures %s" % (
            len(missing), missing[:3], len(extra), extra[:3], len(dups), dups[:3], len(failed), failed[:2])
    return ok, detail


def main():
    global PROPS, COLNAMES
    spec_path = sys.argv[1]
    with open(spec_path) as f:
        spec = json.load(f)
    import pyspark
    js = jars()
    iceberg = next((re.search(r"iceberg-spark-runtime-[^/]*-(\d[\w.]*)\.jar$", j).group(1)
                    for j in js if "iceberg-spark-runtime" in j), "?")
    emit({"engine": "spark", "version": "%s (iceberg-spark-runtime %s)" % (pyspark.__version__, iceberg)})

    if not os.environ.get("JAVA_HOME") and os.path.isdir("/usr/lib/jvm/java-17-openjdk-amd64"):
        os.environ["JAVA_HOME"] = "/usr/lib/jvm/java-17-openjdk-amd64"
    PROPS = schema_props()
    COLNAMES = ["id", "type"] + ["properties." + n for n, _ in PROPS] + ["geometry.type", "geometry.coordinates"]
    with open(spec["usgs"]) as f:
        features = {ft["id"]: ft for ft in json.load(f)["features"]}

    c = Checker()
    spark = None

    def start_spark():
        nonlocal spark
        from pyspark.sql import SparkSession
        b = SparkSession.builder.master("local[2]").appName("mink-compat")
        conf = readme_conf(spec["uri"], spec["credential"])
        for k, v in conf:
            b = b.config(k, v)
        # Only what runs Spark on this machine; no catalog or S3 setting.
        b = (b.config("spark.jars", ",".join(js)).config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "1g").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC"))
        spark = b.getOrCreate()
        spark.sparkContext.setLogLevel("WARN")
        ns = spec["tables"]["earthquakes"].rsplit(".", 1)[0]
        names = [r["tableName"] for r in spark.sql("SHOW TABLES IN mink.%s" % ns).collect()]
        want = spec["tables"]["earthquakes"].rsplit(".", 1)[1]
        return want in names, "%d keys from spark.conf.md; SHOW TABLES IN mink.%s: %s" % (len(conf), ns, sorted(names)[:6])

    c.run("README shows spark.conf.md's block", lambda: uc.readme_shows(
        uc.load_conf_block(os.path.join(HERE, "spark.conf.md"), "properties"), "properties"))
    c.run("session with README's configuration, SHOW TABLES", start_spark)
    if spark is None:
        return 0

    eq = ident(spec["tables"]["earthquakes"])
    sel = select_list()
    for s in spec.get("snapshots", []):
        ref, as_of = s.get("ref"), s.get("as_of_ms")
        if ref is not None and re.fullmatch(r"\d+", ref):
            clause, name = "FOR VERSION AS OF %s" % ref, "SELECT FOR VERSION AS OF a snapshot id"
        elif ref is not None:
            clause, name = "FOR VERSION AS OF '%s'" % ref.replace("'", "\\'"), "SELECT FOR VERSION AS OF '%s'" % ref
        elif as_of is not None:
            clause, name = "FOR TIMESTAMP AS OF timestamp_millis(%d)" % as_of, "SELECT FOR TIMESTAMP AS OF"
        else:
            clause, name = "", "SELECT the current snapshot"
        q = "SELECT %s FROM %s %s" % (sel, eq, clause)
        c.run(name + ": every value", lambda q=q, ids=s["ids"]: compare(spark.sql(q).collect(), features, ids))

    def aggregate():
        cur = next((s["ids"] for s in spec.get("snapshots", []) if s.get("ref") is None and s.get("as_of_ms") is None),
                   list(features))
        r = spark.sql("SELECT count(*) AS n, max(properties.mag) AS m, min(properties.time) AS t FROM %s" % eq).collect()[0]
        mags = [float(features[i]["properties"]["mag"]) for i in cur if features[i]["properties"].get("mag") is not None]
        times = [features[i]["properties"]["time"] for i in cur]
        want = (len(cur), max(mags), min(times))
        got = (r["n"], r["m"], int(r["t"].timestamp() * 1000) if r["t"] else None)
        return got == want, "count, max(mag), min(time): want %s got %s" % (want, got)

    c.run("aggregate count(*), max, min", aggregate)

    dlq = spec.get("dlq")
    if dlq:
        def dead_letters():
            rows = spark.sql("SELECT value, error FROM %s" % ident(dlq["table"])).collect()
            got = sorted(bytes(r["value"]).decode("utf-8", "surrogateescape") if isinstance(r["value"], (bytes, bytearray))
                         else r["value"] for r in rows)
            want = sorted(dlq["values"])
            noerr = sum(1 for r in rows if not r["error"])
            return got == want and noerr == 0, "%d dead letters, %d wanted%s" % (
                len(got), len(want), "" if got == want else "; got %r" % got[:3])

        c.run("dead-letter table: raw values", dead_letters)

    fl = spec.get("flights")
    if fl:
        import flights_compare as fc
        src = fc.Source(fl)
        flights = ident(src.table_name)

        def flights_rows():
            # unix_micros: the timestamptz as µs since the epoch, exact (a
            # collected timestamp is a naive datetime in Python's local zone).
            rows = spark.sql("SELECT unix_micros(date), delay, distance, origin, destination FROM %s" % flights).collect()
            return src.check_rows(tuple(r) for r in rows)

        def flights_aggregate():
            rows = spark.sql("SELECT origin, count(*), sum(delay), max(distance) FROM %s GROUP BY origin" % flights).collect()
            return src.check_aggregate({r[0]: tuple(r[1:]) for r in rows})

        c.run(src.rows_check(), flights_rows)
        c.run(fc.AGG_CHECK + ": SELECT origin, count(*), sum(delay), max(distance) ... GROUP BY origin", flights_aggregate)

    st = spec.get("stream")
    if st:
        work = tempfile.mkdtemp(prefix="mink-spark-stream-")
        c.run("Structured Streaming while records arrive, restarted from its checkpoint: each record once",
              lambda: stream_check(spark, st, work))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
