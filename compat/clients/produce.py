"""Produces records to Kafka with librdkafka (confluent-kafka from PyPI), a
client nobody at Mink wrote, and writes one JSON line per record to stdout:
{"p": partition, "o": offset, "v": value text, "aborted": bool} for each record
the broker acknowledged, {"failed": true, "v": value text} for one whose
delivery failed (Kafka may or may not hold it).

Modes:
  stream   COUNT unique values {"n":i,"v":"<random>"} round robin over
           --partitions partitions, at --rate records a second.
  usgs     the features of a GeoJSON feed (--geojson), key = the event id,
           value = the feature's JSON text as the feed has it, features
           [--from, --to); --bad N appends N values that are not JSON.
  flights  the first COUNT rows of the flight records (--parquet), each as
           {"date":"2001-01-01T00:01:00Z","delay":33,"distance":2176,
           "origin":"LAS","destination":"PHL"} (the form of Go's
           internal/flights.JSON), no key.

Producer settings: --idempotent, --transactional (transactions of --txn-size
records; every --abort-every-th one is aborted: its records are written to
the log and marked aborted, and must never be read), --compression
(none, gzip, snappy, lz4, zstd), --config key=value for anything else
(security.protocol, sasl.*, ssl.ca.location).
"""

import argparse
import json
import random
import sys
import time

from confluent_kafka import Producer, KafkaException


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["stream", "usgs", "flights"])
    ap.add_argument("--parquet")
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--geojson")
    ap.add_argument("--from", dest="start", type=int, default=0)
    ap.add_argument("--to", dest="end", type=int, default=-1)
    ap.add_argument("--bad", type=int, default=0)
    ap.add_argument("--idempotent", action="store_true")
    ap.add_argument("--transactional", action="store_true")
    ap.add_argument("--txn-size", type=int, default=50)
    ap.add_argument("--abort-every", type=int, default=3)
    ap.add_argument("--compression", default="none")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pad", type=int, default=0, help="stream: every value at least this many bytes")
    return ap.parse_args()


def main():
    a = parse_args()
    conf = {
        "bootstrap.servers": a.bootstrap,
        "acks": "all",
        "compression.type": a.compression,
        "linger.ms": 5,
        "enable.idempotence": a.idempotent or a.transactional,
    }
    if a.transactional:
        conf["transactional.id"] = "mink-compat-%s-%d" % (a.topic, a.seed)
    for kv in a.config:
        k, _, v = kv.partition("=")
        conf[k] = v
    p = Producer(conf)
    out = sys.stdout
    aborted = set()  # values written in transactions that are aborted

    def report(err, msg):
        v = msg.value().decode("utf-8", "surrogateescape")
        if err is not None:
            out.write(json.dumps({"failed": True, "v": v, "error": str(err)}) + "\n")
            return
        out.write(json.dumps({"p": msg.partition(), "o": msg.offset(), "v": v, "aborted": msg.value() in aborted}) + "\n")

    records = list(values(a))
    if a.transactional:
        p.init_transactions(30)
    interval = 1.0 / a.rate if a.rate > 0 else 0
    t0 = time.monotonic()
    txn = 0
    i = 0
    while i < len(records):
        batch = records[i:i + (a.txn_size if a.transactional else len(records))]
        abort = a.transactional and a.abort_every > 0 and txn % a.abort_every == a.abort_every - 1
        if a.transactional:
            p.begin_transaction()
        for j, (part, key, val) in enumerate(batch):
            if abort:
                aborted.add(val)
            kw = {"value": val, "on_delivery": report}
            if key is not None:
                kw["key"] = key
            if part is not None:
                kw["partition"] = part
            while True:
                try:
                    p.produce(a.topic, **kw)
                    break
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
            n = i + j + 1
            due = t0 + n * interval
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
        if a.transactional:
            # Deliver every record of the transaction first, so that an
            # aborted one's records are in the log (with offsets) before
            # the abort marker, as a producer that fails mid-transaction
            # leaves them.
            p.flush(60)
            if abort:
                p.abort_transaction(60)
            else:
                p.commit_transaction(60)
            txn += 1
        i += len(batch)
    left = p.flush(60)
    out.flush()
    if left:
        print("produce.py: %d records still in flight after 60 s" % left, file=sys.stderr)
        return 1
    print("produce.py: %d records, %d transactions, %.1f s" % (len(records), txn, time.monotonic() - t0), file=sys.stderr)
    return 0


def values(a):
    """Yields (partition or None, key or None, value bytes)."""
    if a.mode == "stream":
        rng = random.Random(a.seed)
        for n in range(a.count):
            pad = "".join(chr(97 + rng.randrange(26)) for _ in range(max(rng.randrange(64), a.pad)))
            v = '{"n":%d,"v":"%s-%016x-%s"}' % (n, a.topic, rng.getrandbits(64), pad)
            yield n % a.partitions, None, v.encode()
        return
    if a.mode == "flights":
        yield from flights(a.parquet, a.count)
        return
    with open(a.geojson, "rb") as f:
        feed = json.load(f)
    feats = feed["features"]
    end = len(feats) if a.end < 0 else a.end
    for feat in feats[a.start:end]:
        yield None, feat["id"].encode(), json.dumps(feat, separators=(",", ":")).encode()
    for k in range(a.bad):
        yield None, b"bad-%d" % k, b"not json %d {" % k


def flights(path, count):
    """Yields (None, None, JSON bytes) for the first count rows of path."""
    import datetime
    import pyarrow.parquet as pq

    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    n = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
        cols = batch.to_pydict()
        for i in range(batch.num_rows):
            if n >= count:
                return
            d = batch.column(0)[i].value  # microseconds since the epoch (UTC)
            row = {"date": None if d is None else rfc3339(epoch + datetime.timedelta(microseconds=d)),
                   "delay": cols["delay"][i], "distance": cols["distance"][i],
                   "origin": cols["origin"][i], "destination": cols["destination"][i]}
            yield None, None, json.dumps(row, separators=(",", ":")).encode()
            n += 1


def rfc3339(t):
    """RFC 3339 in UTC with Z, fractional seconds only when not zero (as Go's
    time.RFC3339Nano writes them)."""
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        s += ("." + "%06d" % t.microsecond).rstrip("0")
    return s + "Z"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KafkaException as e:
        print("produce.py: %s" % e, file=sys.stderr)
        sys.exit(1)
