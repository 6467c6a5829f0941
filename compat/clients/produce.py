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
    ap.add_argument("mode", choices=["stream", "usgs"])
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
    with open(a.geojson, "rb") as f:
        feed = json.load(f)
    feats = feed["features"]
    end = len(feats) if a.end < 0 else a.end
    for feat in feats[a.start:end]:
        yield None, feat["id"].encode(), json.dumps(feat, separators=(",", ":")).encode()
    for k in range(a.bad):
        yield None, b"bad-%d" % k, b"not json %d {" % k


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KafkaException as e:
        print("produce.py: %s" % e, file=sys.stderr)
        sys.exit(1)
