"""Consumes a topic as a consumer group with librdkafka (confluent-kafka from
PyPI) until it has read every record below each partition's high watermark
as of its start (read_committed: up to the last stable offset), commits
those offsets synchronously, and prints them as one JSON object
{"<partition>": <committed offset>, ...}: what Mink's consumer-group tag
group.<name> must then hold (README, "Consumer-group tags").

Usage: commit_group.py --bootstrap HOST:PORT --topic T --group G [--config k=v ...]
"""

import argparse
import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    conf = {"bootstrap.servers": a.bootstrap, "group.id": a.group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "isolation.level": "read_committed"}
    for kv in a.config:
        k, _, v = kv.partition("=")
        conf[k] = v
    c = Consumer(conf)
    md = c.list_topics(a.topic, timeout=30)
    parts = sorted(md.topics[a.topic].partitions)
    ends = {}
    for p in parts:
        _, high = c.get_watermark_offsets(TopicPartition(a.topic, p), timeout=30)
        ends[p] = high
    c.assign([TopicPartition(a.topic, p, 0) for p in parts])
    pos = {p: 0 for p in parts}
    deadline = time.monotonic() + a.timeout
    while any(pos[p] < ends[p] for p in parts):
        if time.monotonic() > deadline:
            print("commit_group.py: not at the ends %s after %.0f s: at %s" % (ends, a.timeout, pos), file=sys.stderr)
            return 1
        m = c.poll(0.5)
        if m is None:
            # read_committed stops at the last stable offset; control
            # records past the last data record advance the position too.
            for tp in c.position([TopicPartition(a.topic, p) for p in parts]):
                if tp.offset >= 0:
                    pos[tp.partition] = max(pos[tp.partition], tp.offset)
            continue
        if m.error():
            continue
        pos[m.partition()] = max(pos[m.partition()], m.offset() + 1)
    offs = [TopicPartition(a.topic, p, ends[p]) for p in parts]
    c.commit(offsets=offs, asynchronous=False)
    c.close()
    print(json.dumps({str(p): ends[p] for p in parts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
