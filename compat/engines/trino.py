"""Trino (io.trino:trino-server from Maven Central, Java 25) reading Mink
through the Iceberg connector's REST catalog and its native S3 file system,
configured by the block of compat/engines/trino.conf.md, which README shows.

Usage: trino.py SPEC.json (the engine contract of `make compat`).

The script starts Trino itself and stops it before it exits: a single node
(coordinator that schedules work on itself) in a temporary folder, on a free
port of 127.0.0.1, with a 2 GiB heap and the catalog `mink` of
trino.conf.md, the placeholders http://127.0.0.1:8181 and CLIENT_ID:SECRET
replaced by the spec's uri and credential. scripts/ensure-trino installs the
server (the Iceberg plugin only); the Java is $TRINO_JAVA_HOME, else
/usr/lib/jvm/temurin-25-jdk-amd64 (Trino 476 needs Java 24 or later).
Queries go through the `trino` client from PyPI.

Checks (each compares values with the GeoJSON source or the spec):
  - README.md holds trino.conf.md's block, as this run uses it;
  - start: the server answers /v1/info with starting=false;
  - SELECT of the current snapshot: every feature's id, type, each property
    (timestamps as epoch ms) and geometry, floats exact;
  - a join of the table with an aggregate of itself by properties.net;
  - FOR VERSION AS OF / FOR TIMESTAMP AS OF per spec snapshot: its id set;
  - the dead-letter table: its values as a multiset;
  - with "flights" in the spec, the flights table's rows (a multiset) and
    a join with its own aggregate by origin, compared with the Parquet file
    (compat/engines/flights_compare.py);
  - memory: the server's peak resident set size.

Stdout: one JSON line per check; stderr: logs.
"""

import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter

# This file is trino.py too: import the client from the environment, not itself.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import trino.dbapi  # noqa: E402
import trino.exceptions  # noqa: E402

# Back on the path for the shared modules (trino is imported already).
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import usgs_compare as uc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JAVA_HOME = os.environ.get("TRINO_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def log(*a):
    print("trino.py:", *a, file=sys.stderr, flush=True)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def readme_conf(uri, credential):
    """The properties block of trino.conf.md with the spec's uri and credential."""
    block = uc.load_conf_block(os.path.join(HERE, "trino.conf.md"), "properties")
    return block.replace("http://127.0.0.1:8181", uri).replace("CLIENT_ID:SECRET", credential)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A single-node Trino in a temporary folder."""

    def __init__(self, home, catalog):
        self.home = home
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mink-trino-")
        etc = os.path.join(self.dir, "etc")
        os.makedirs(os.path.join(etc, "catalog"))
        data = os.path.join(self.dir, "data")
        os.makedirs(data)
        files = {
            # The node announces and is called at its internal address, by
            # default the machine's first non-loopback one: keep it on loopback.
            "node.properties": "node.environment=compat\nnode.id=compat-1\nnode.data-dir=%s\n"
                               "node.internal-address=127.0.0.1\n" % data,
            # A small heap for a 2-core, shared machine; C1 only and the
            # serial collector start faster than C2 and G1 on 2 cores.
            "jvm.config": "\n".join([
                "-server", "-Xmx2G", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-XX:+ExitOnOutOfMemoryError", "-Djdk.attach.allowAttachSelf=true",
                "-Dfile.encoding=UTF-8", ""]),
            "config.properties": "\n".join([
                "coordinator=true",
                "node-scheduler.include-coordinator=true",
                "http-server.http.port=%d" % self.port,
                "discovery.uri=http://127.0.0.1:%d" % self.port,
                "query.max-memory=1GB",
                "query.max-memory-per-node=1GB",
                "task.concurrency=2",
                ""]),
            "log.properties": "io.trino=INFO\n",
            "catalog/mink.properties": catalog,
        }
        for name, text in files.items():
            with open(os.path.join(etc, name), "w") as f:
                f.write(text)
        if not os.access(os.path.join(JAVA_HOME, "bin", "java"), os.X_OK):
            raise RuntimeError("no Java at %s: Trino 476 needs Java 24 or later; set TRINO_JAVA_HOME" % JAVA_HOME)
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        env = dict(os.environ, JAVA_HOME=JAVA_HOME,
                   PATH=os.path.join(JAVA_HOME, "bin") + os.pathsep + os.environ.get("PATH", ""))
        # `launcher run` execs java in the foreground: the pid is the JVM's.
        self.proc = subprocess.Popen(
            [os.path.join(home, "bin", "launcher"), "run", "--etc-dir", etc, "--data-dir", data],
            cwd=home, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout=240):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("Trino exited with %s: %s" % (self.proc.returncode, self.tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/v1/info" % self.port, timeout=2) as r:
                    info = json.load(r)
                if not info.get("starting", True):
                    return info["nodeVersion"]["version"]
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("Trino not ready after %d s: %s" % (timeout, self.tail()))

    def tail(self):
        try:
            with open(os.path.join(self.dir, "server.log")) as f:
                lines = f.read().splitlines()
            errs = [l for l in lines if "ERROR" in l or "Exception" in l]
            return " | ".join((errs or lines)[-3:])[:800]
        except OSError:
            return ""

    def peak_rss_mib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        if os.environ.get("TRINO_KEEP") is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            log("kept", self.dir)


class Checker:
    def run(self, name, fn):
        t0 = time.monotonic()
        try:
            ok, detail = fn()
        except Exception as e:  # a check that throws fails, the others still run
            msg = str(e).strip().splitlines()[0][:600] if str(e).strip() else ""
            ok, detail = False, "%s: %s" % (type(e).__name__, msg)
        secs = time.monotonic() - t0
        emit({"check": name, "ok": bool(ok), "detail": detail, "seconds": round(secs, 3)})
        log("%s: %s (%.1f s) %s" % (name, "ok" if ok else "FAILED", secs, detail))


def ident(name):
    """Trino's name of a Mink table NS.NAME (NS may hold dots) in catalog mink."""
    ns, _, table = name.rpartition(".")
    return 'mink."%s"."%s"' % (ns.replace('"', '""'), table.replace('"', '""'))


def schema_props():
    with open(os.path.join(ROOT, "devenv", "earthquakes.schema.json")) as f:
        s = json.load(f)
    for fld in s["fields"]:
        if fld["name"] == "properties":
            return [(p["name"], p["type"]) for p in fld["type"]["fields"]]
    raise SystemExit("earthquakes.schema.json: no properties")


def ms(v):
    """Epoch milliseconds of a timestamp with time zone (exact, no float)."""
    if v is None:
        return None
    return (v - EPOCH) // datetime.timedelta(milliseconds=1)


def expected(feat, props):
    p = feat.get("properties") or {}
    g = feat.get("geometry") or {}
    row = [feat["id"], feat.get("type")]
    row += [p.get(n) for n, _ in props]
    row += [g.get("type"), g.get("coordinates")]
    return row


def same(a, b):
    """Equal values, ints and floats by value (JSON's 2 is the double 2.0), exact."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return a == b


def main():
    spec = json.load(open(sys.argv[1]))
    with open(spec["usgs"]) as f:
        features = json.load(f)["features"]
    props = schema_props()
    source = {f["id"]: expected(f, props) for f in features}
    table = ident(spec["tables"]["earthquakes"])

    t0 = time.monotonic()
    home = subprocess.run([os.path.join(ROOT, "scripts", "ensure-trino")], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    log("server in %s (%.1f s to ensure)" % (home, time.monotonic() - t0))
    catalog = readme_conf(spec["uri"], spec["credential"])
    if spec.get("warehouse"):
        catalog += "iceberg.rest-catalog.warehouse=%s\n" % spec["warehouse"]

    server = Server(home, catalog)
    try:
        t0 = time.monotonic()
        version = server.wait_ready()
        emit({"engine": "trino", "version": version})

        Checker().run("README shows the catalog file this run uses", lambda: uc.readme_shows(
            uc.load_conf_block(os.path.join(HERE, "trino.conf.md"), "properties"), "properties"))
        conn = trino.dbapi.connect(host="127.0.0.1", port=server.port, user="compat",
                                   catalog="mink", request_timeout=600)
        # /v1/info says started before the node has announced itself to the
        # coordinator's discovery: until then queries fail NO_NODES_AVAILABLE.
        while True:
            if time.monotonic() - t0 > 240:
                raise RuntimeError("Trino lists no active node after 240 s: " + server.tail())
            try:
                cur = conn.cursor()
                cur.execute("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")
                if cur.fetchall()[0][0] >= 1:
                    cur.execute("SELECT 1")
                    cur.fetchall()
                    break
            except trino.exceptions.TrinoQueryError as e:
                if e.error_name != "NO_NODES_AVAILABLE":
                    raise
            time.sleep(0.5)
        start = time.monotonic() - t0
        emit({"check": "start single-node Trino (2 GiB heap)", "ok": True,
              "detail": "port %d, a query runs" % server.port, "seconds": round(start, 3)})

        def query(sql):
            # A node active in system.runtime.nodes may not be in the
            # scheduler's node set of the mink catalog yet (refreshed every
            # few seconds): a scan then fails NO_NODES_AVAILABLE (seen in
            # CI on a loaded machine while SELECT 1 ran). Wait for it, 60 s.
            deadline = time.monotonic() + 60
            while True:
                try:
                    cur = conn.cursor()
                    cur.execute(sql)
                    return cur.fetchall()
                except trino.exceptions.TrinoQueryError as e:
                    waiting = e.error_name == "NO_NODES_AVAILABLE" or "No nodes available" in (e.message or "")
                    if not waiting or time.monotonic() > deadline:
                        raise
                time.sleep(0.5)

        cols = ["id", "type"]
        for n, t in props:
            cols.append('properties."%s"' % n)
        cols += ["geometry.type", "geometry.coordinates"]
        tsidx = [2 + i for i, (_, t) in enumerate(props) if t == "timestamptz"]
        names = ["id", "type"] + ["properties." + n for n, _ in props] + ["geometry.type", "geometry.coordinates"]

        def compare_rows(rows, want_ids, what):
            got, dup, diffs = {}, 0, []
            for r in rows:
                r = list(r)
                for i in tsidx:
                    r[i] = ms(r[i])
                if r[0] in got:
                    dup += 1
                got[r[0]] = r
            missing = sorted(set(want_ids) - set(got))
            extra = sorted(set(got) - set(want_ids))
            for i in sorted(set(got) & set(want_ids)):
                want = source[i]
                for k, (a, b) in enumerate(zip(got[i], want)):
                    if not same(a, b):
                        diffs.append("%s %s: got %r want %r" % (i, names[k], a, b))
            ok = not (dup or missing or extra or diffs)
            detail = "%s: %d rows, %d expected; %d duplicated, %d missing, %d extra, %d values differ" % (
                what, len(rows), len(want_ids), dup, len(missing), len(extra), len(diffs))
            if not ok:
                detail += "; first: " + "; ".join((diffs + ["missing " + m for m in missing] + ["extra " + e for e in extra])[:3])
            return ok, detail

        ck = Checker()
        sel = "SELECT %s FROM %s" % (", ".join(cols), table)
        ck.run("SELECT the current snapshot, every column vs GeoJSON",
               lambda: compare_rows(query(sel), list(source), "current"))

        def join():
            rows = query(
                "SELECT e.id, e.properties.net, s.n, s.max_mag, s.sum_sig FROM %s e JOIN "
                "(SELECT properties.net AS net, count(*) AS n, max(properties.mag) AS max_mag, "
                "sum(properties.sig) AS sum_sig FROM %s GROUP BY properties.net) s "
                "ON e.properties.net = s.net" % (table, table))
            agg = {}
            for f in features:
                p = f["properties"]
                a = agg.setdefault(p.get("net"), [0, None, 0])
                a[0] += 1
                if p.get("mag") is not None:
                    a[1] = p["mag"] if a[1] is None else max(a[1], p["mag"])
                a[2] += p.get("sig") or 0
            want = {f["id"]: [f["properties"].get("net")] + agg[f["properties"].get("net")]
                    for f in features if f["properties"].get("net") is not None}
            got, diffs = {}, []
            for r in rows:
                got[r[0]] = list(r[1:])
            for i in sorted(set(want) | set(got)):
                if i not in got or i not in want or not same(got[i], want[i]):
                    diffs.append("%s: got %r want %r" % (i, got.get(i), want.get(i)))
            ok = not diffs and len(rows) == len(want)
            d = "%d rows joined (%d nets), %d expected; %d differ" % (len(rows), len(agg), len(want), len(diffs))
            if diffs:
                d += "; first: " + "; ".join(diffs[:3])
            return ok, d
        ck.run("JOIN with its own aggregate by properties.net (count, max mag, sum sig)", join)

        for snap in spec.get("snapshots") or []:
            ref, as_of = snap.get("ref"), snap.get("as_of_ms")
            if ref is not None:
                clause = "FOR VERSION AS OF %s" % (ref if re.fullmatch(r"-?\d+", ref) else "'%s'" % ref.replace("'", "''"))
            elif as_of is not None:
                t = EPOCH + datetime.timedelta(milliseconds=as_of)
                clause = "FOR TIMESTAMP AS OF TIMESTAMP '%s UTC'" % t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
            else:
                continue
            sql = "SELECT %s FROM %s %s" % (", ".join(cols), table, clause)
            ck.run("SELECT ... " + clause, lambda sql=sql, ids=snap["ids"], c=clause: compare_rows(query(sql), ids, c))

        dlq = spec.get("dlq")
        if dlq:
            def dead_letters():
                rows = query("SELECT value, error FROM %s" % ident(dlq["table"]))
                got = Counter(None if v is None else bytes(v).decode("utf-8", "replace") for v, _ in rows)
                want = Counter(dlq["values"])
                noerr = sum(1 for _, e in rows if not e)
                ok = got == want and noerr == 0
                d = "%d dead letters, %d expected; %d without an error text" % (len(rows), len(dlq["values"]), noerr)
                if got != want:
                    d += "; missing %r, extra %r" % (list((want - got).elements())[:2], list((got - want).elements())[:2])
                return ok, d
            ck.run("SELECT the dead-letter table's values", dead_letters)

        fl = spec.get("flights")
        if fl:
            import flights_compare as fc
            src = fc.Source(fl)
            flights = ident(src.table_name)
            ck.run(src.rows_check(), lambda: src.check_rows(
                query("SELECT date, delay, distance, origin, destination FROM %s" % flights)))

            def flights_join():
                # Each row joined with its origin's aggregate, grouped back:
                # per origin the aggregate and how many rows joined it (its
                # count again). IS NOT DISTINCT FROM: a null origin joins too.
                rows = query(
                    "SELECT s.origin, s.n, s.sum_delay, s.max_distance, count(*) FROM %s f JOIN "
                    "(SELECT origin, count(*) AS n, sum(delay) AS sum_delay, max(distance) AS max_distance "
                    "FROM %s GROUP BY origin) s ON f.origin IS NOT DISTINCT FROM s.origin "
                    "GROUP BY s.origin, s.n, s.sum_delay, s.max_distance" % (flights, flights))
                ok, d = src.check_aggregate({r[0]: tuple(r[1:4]) for r in rows})
                bad = ["%r: %d joined rows, count %d" % (r[0], r[4], r[1]) for r in rows if r[4] != r[1]]
                if bad:
                    ok, d = False, d + "; joined rows differ from the count: " + "; ".join(bad[:3])
                return ok, d + "; %d rows joined" % sum(r[4] for r in rows)
            ck.run(fc.AGG_CHECK + ": JOIN with its own GROUP BY origin (count, sum delay, max distance)", flights_join)

        def memory():
            rss = server.peak_rss_mib()
            return rss is not None and rss < 4096, "peak RSS of the Trino JVM: %s MiB (heap -Xmx2G)" % (
                "?" if rss is None else "%.0f" % rss)
        ck.run("memory within a 2 GiB heap", memory)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
