package icebergmeta

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// Every manifest and manifest list Mink writes is an Avro object container
// file with the "null" codec, named in the header ("avro.codec": "null").
//
// iceberg-go v0.7.0 writes these files with the deflate codec, hard-coded
// (no option), and Go's compress/flate ends every deflate stream with an
// empty final stored block. icebird, an Iceberg reader in JavaScript, reads
// only the "null" and "deflate" codecs, named explicitly, and inflates with
// hyparquet-compressors' gunzip, which fails on stored blocks ("offset is
// out of bounds": after the final block it decodes the input again into
// the rest of its buffer, and copying a stored block past the buffer's end
// throws; zlib's streams end with a Huffman block and pass). "null" is a
// codec every Avro implementation must read (Avro spec, "Object Container
// Files": required codecs), and the Iceberg spec leaves the codec of
// manifests to the writer. The price is size: the records' bytes are
// stored as they are.
//
// The twmb/avro OCF writer (under iceberg-go) omits "avro.codec" for the
// null codec, which the Avro spec allows but icebird rejects, so the
// container iceberg-go wrote is rewritten here: the same header metadata
// and sync marker with avro.codec set to "null", and the same blocks, each
// inflated.

// ocfHeader is the header of an object container file (Avro spec, "Object
// Container Files": org.apache.avro.file.Header), with its metadata map
// read as an array of key/value records: the two encode to the same bytes
// (spec, "Complex Types Binary Encoding": a map is blocks of a count and
// that many key/value pairs, an array blocks of a count and that many
// items; a string and bytes are both a length and the bytes), and an array
// keeps the order of the entries, so a header is rewritten as it was.
var ocfHeader = avro.MustParse(`{"type":"record","name":"org.apache.avro.file.Header","fields":[
	{"name":"magic","type":{"type":"fixed","name":"Magic","size":4}},
	{"name":"meta","type":{"type":"array","items":{"type":"record","name":"MetaEntry","fields":[
		{"name":"key","type":"string"},{"name":"value","type":"bytes"}]}}},
	{"name":"sync","type":{"type":"fixed","name":"Sync","size":16}}]}`)

type ocfHeaderRecord struct {
	Magic [4]byte     `avro:"magic"`
	Meta  []ocfMetaKV `avro:"meta"`
	Sync  [16]byte    `avro:"sync"`
}

type ocfMetaKV struct {
	Key   string `avro:"key"`
	Value []byte `avro:"value"`
}

var ocfMagic = [4]byte{'O', 'b', 'j', 1}

// avroCodecNull rewrites the object container file src (as iceberg-go
// writes it: codec "deflate", or "null"/absent) with the "null" codec named
// in its header; the records, the other metadata and the sync marker are
// kept. Errors name what is malformed in src.
func avroCodecNull(src []byte) ([]byte, error) {
	var h ocfHeaderRecord
	rest, err := ocfHeader.Decode(src, &h)
	if err != nil {
		return nil, fmt.Errorf("avro header: %w", err)
	}
	if h.Magic != ocfMagic {
		return nil, fmt.Errorf("avro header: magic %x is not %x", h.Magic, ocfMagic)
	}
	codec := -1
	for i, kv := range h.Meta {
		if kv.Key == "avro.codec" {
			codec = i
		}
	}
	if codec < 0 {
		h.Meta = append(h.Meta, ocfMetaKV{Key: "avro.codec"})
		codec = len(h.Meta) - 1
	}
	var inflate func([]byte) ([]byte, error)
	switch name := string(h.Meta[codec].Value); name {
	case "deflate":
		inflate = ocf.DeflateCodec(-1).Decompress
	case "", "null":
		inflate = func(b []byte) ([]byte, error) { return b, nil }
	default:
		return nil, fmt.Errorf("avro header: codec %q, want deflate or null", name)
	}
	h.Meta[codec].Value = []byte("null")
	out, err := ocfHeader.AppendEncode(nil, &h)
	if err != nil {
		return nil, fmt.Errorf("avro header: %w", err)
	}
	// Blocks: a record count and a byte size (Avro longs: zig-zag varints),
	// the data, the sync marker.
	for len(rest) > 0 {
		at := len(src) - len(rest)
		count, n := binary.Varint(rest)
		if n <= 0 || count < 0 {
			return nil, fmt.Errorf("avro block at byte %d: bad record count", at)
		}
		rest = rest[n:]
		size, n := binary.Varint(rest)
		if n <= 0 || size < 0 || size > int64(len(rest)-n) {
			return nil, fmt.Errorf("avro block at byte %d: bad size", at)
		}
		data := rest[n : n+int(size)]
		rest = rest[n+int(size):]
		if !bytes.HasPrefix(rest, h.Sync[:]) {
			return nil, fmt.Errorf("avro block at byte %d: no sync marker", at)
		}
		rest = rest[len(h.Sync):]
		raw, err := inflate(data)
		if err != nil {
			return nil, fmt.Errorf("avro block at byte %d: %w", at, err)
		}
		out = binary.AppendVarint(out, count)
		out = binary.AppendVarint(out, int64(len(raw)))
		out = append(out, raw...)
		out = append(out, h.Sync[:]...)
	}
	return out, nil
}

// writeManifest writes entries as a manifest at loc (iceberg.WriteManifest,
// then avroCodecNull): each entry is written with its own status, snapshot
// id and sequence numbers; the manifest file's length is that of the file
// returned.
func writeManifest(loc string, spec iceberg.PartitionSpec, schema *iceberg.Schema, snapshotID int64,
	entries []iceberg.ManifestEntry) (iceberg.ManifestFile, *OutputFile, error) {
	var buf bytes.Buffer
	w, err := iceberg.NewManifestWriter(FormatVersion, &buf, spec, schema, snapshotID)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		switch e.Status() {
		case iceberg.EntryStatusADDED:
			if e.SnapshotID() != snapshotID {
				return nil, nil, fmt.Errorf("manifest entry of %s: added by snapshot %d, not %d", e.DataFile().FilePath(), e.SnapshotID(), snapshotID)
			}
			err = w.Add(e)
		case iceberg.EntryStatusEXISTING:
			err = w.Existing(e)
		case iceberg.EntryStatusDELETED:
			if e.SnapshotID() != snapshotID {
				return nil, nil, fmt.Errorf("manifest entry of %s: deleted by snapshot %d, not %d", e.DataFile().FilePath(), e.SnapshotID(), snapshotID)
			}
			err = w.Delete(e)
		default:
			err = fmt.Errorf("manifest entry of %s: status %v", e.DataFile().FilePath(), e.Status())
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	content, err := avroCodecNull(buf.Bytes())
	if err != nil {
		return nil, nil, err
	}
	m, err := w.ToManifestFile(loc, int64(len(content)))
	if err != nil {
		return nil, nil, err
	}
	return m, &OutputFile{Location: loc, Content: content}, nil
}

// writeManifestList writes the manifest list of snapshot snapshotID at loc
// (iceberg.WriteManifestList, then avroCodecNull).
func writeManifestList(loc string, snapshotID int64, parentID *int64, seq int64, manifests []iceberg.ManifestFile) (*OutputFile, error) {
	var buf bytes.Buffer
	if err := iceberg.WriteManifestList(FormatVersion, &buf, snapshotID, parentID, &seq, 0, manifests); err != nil {
		return nil, err
	}
	content, err := avroCodecNull(buf.Bytes())
	if err != nil {
		return nil, err
	}
	return &OutputFile{Location: loc, Content: content}, nil
}
