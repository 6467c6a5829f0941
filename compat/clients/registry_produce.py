"""Produces the USGS earthquake feed to Kafka three times, once per Schema
Registry format, with confluent-kafka's own serializers registering the
schemas in a real registry:

  <prefix>avro         AvroSerializer, devenv/earthquakes.avsc
  <prefix>protobuf     ProtobufSerializer, e2e/testdata/earthquakes.proto
                       (compiled at run time by grpcio-tools' protoc)
  <prefix>json-schema  JSONSerializer, compat/clients/earthquakes.jsonschema.json

Each GeoJSON feature is one record, key = its id (UTF-8), into the subject
<topic>-value (TopicNameStrategy, the serializers' default).

usage: registry_produce.py BOOTSTRAP REGISTRY_URL TOPIC_PREFIX [GEOJSON]

Prints one JSON array on stdout: every acknowledged record as
{"topic", "partition", "offset", "id"}. Exits non-zero when a record was
not acknowledged. Stderr is for logs.
"""

import datetime
import importlib
import json
import os
import subprocess
import sys
import tempfile

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROPS = ["mag", "place", "time", "updated", "tz", "url", "detail", "felt", "cdi", "mmi", "alert",
         "status", "tsunami", "sig", "net", "code", "ids", "sources", "types", "nst", "dmin",
         "rms", "gap", "magType", "type", "title"]
TIMES = {"time", "updated"}
DOUBLES = {"mag", "cdi", "mmi", "dmin", "rms", "gap"}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def avro_value(f):
    """The feature as devenv/earthquakes.avsc's record: times stay epoch
    milliseconds (timestamp-millis); numbers of double fields as floats."""
    p = f["properties"]
    props = {k: (float(p[k]) if k in DOUBLES and p.get(k) is not None else p.get(k)) for k in PROPS}
    g = f.get("geometry")
    geom = None if g is None else {"type": g.get("type"), "coordinates": [float(c) for c in g["coordinates"]]
                                   if g.get("coordinates") is not None else None}
    return {"id": f["id"], "type": f.get("type"), "properties": props, "geometry": geom}


def rfc3339(ms):
    t = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc).replace(
        microsecond=(ms % 1000) * 1000)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def json_value(f):
    """The feature for the JSON Schema: times as RFC 3339 date-time strings
    (exact milliseconds, UTC), everything else as in the GeoJSON."""
    v = avro_value(f)
    for k in TIMES:
        if v["properties"][k] is not None:
            v["properties"][k] = rfc3339(v["properties"][k])
    return v


def proto_module():
    """Compiles e2e/testdata/earthquakes.proto with grpcio-tools' protoc into
    a temporary folder and imports the generated module."""
    from grpc_tools import protoc
    import grpc_tools
    out = tempfile.mkdtemp(prefix="mink-proto-")
    src = os.path.join(ROOT, "e2e", "testdata")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + src, "-I" + include, "--python_out=" + out, "earthquakes.proto"])
    if rc != 0:
        raise SystemExit("protoc failed: %d" % rc)
    sys.path.insert(0, out)
    return importlib.import_module("earthquakes_pb2")


def proto_value(pb, f):
    m = pb.Earthquake(id=f["id"])
    if f.get("type") is not None:
        m.type = f["type"]
    p = f["properties"]
    for k in PROPS:
        v = p.get(k)
        if v is None:
            continue
        if k in TIMES:
            getattr(m.properties, k).FromMilliseconds(v)
        elif k in DOUBLES:
            setattr(m.properties, k, float(v))
        else:
            setattr(m.properties, k, v)
    g = f.get("geometry")
    if g is not None:
        m.geometry.SetInParent()
        if g.get("type") is not None:
            m.geometry.type = g["type"]
        m.geometry.coordinates.extend(float(c) for c in g.get("coordinates") or [])
    return m


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    bootstrap, registry, prefix = sys.argv[1:4]
    geojson = sys.argv[4] if len(sys.argv) > 4 else os.environ.get(
        "MINK_USGS", "/work/shared/data/usgs-earthquakes-week.geojson")
    with open(geojson) as fh:
        features = json.load(fh)["features"]

    sr = SchemaRegistryClient({"url": registry})
    with open(os.path.join(ROOT, "devenv", "earthquakes.avsc")) as fh:
        avro_schema = fh.read()
    with open(os.path.join(ROOT, "compat", "clients", "earthquakes.jsonschema.json")) as fh:
        json_schema = fh.read()
    pb = proto_module()
    formats = [
        ("avro", AvroSerializer(sr, avro_schema), avro_value),
        ("protobuf", ProtobufSerializer(pb.Earthquake, sr, {"use.deprecated.format": False}),
         lambda f: proto_value(pb, f)),
        ("json-schema", JSONSerializer(json_schema, sr), json_value),
    ]
    keys = StringSerializer("utf_8")
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 20})
    acked, failed = [], []

    def report(fid):
        def cb(err, msg):
            if err is not None:
                failed.append((fid, str(err)))
            else:
                acked.append({"topic": msg.topic(), "partition": msg.partition(),
                              "offset": msg.offset(), "id": fid})
        return cb

    for name, ser, conv in formats:
        topic = prefix + name
        ctx = SerializationContext(topic, MessageField.VALUE)
        for f in features:
            producer.produce(topic, key=keys(f["id"]), value=ser(conv(f), ctx), on_delivery=report(f["id"]))
            producer.poll(0)
        left = producer.flush(60)
        if left:
            raise SystemExit("%s: %d records not delivered after 60 s" % (topic, left))
        log("%s: %d records produced" % (topic, len(features)))
    if failed:
        raise SystemExit("%d records failed, first: %s" % (len(failed), failed[0]))
    json.dump(acked, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
