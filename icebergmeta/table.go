package icebergmeta

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// PartitionSpec returns the partition spec of every Mink table (spec id 0):
// one field, PartitionFieldID named PartitionFieldName, identity on
// _kafka.partition (PartitionSourceID). It fails with ErrInvalidSchema when
// schema has no int field "partition" with id 2 inside a struct "_kafka"
// with id 1 that is the schema's first column.
func PartitionSpec(schema *iceberg.Schema) (iceberg.PartitionSpec, error) {
	if err := checkSchema(schema); err != nil {
		return iceberg.PartitionSpec{}, err
	}
	id := PartitionFieldID
	spec, err := iceberg.NewPartitionSpecOpts(
		iceberg.WithSpecID(0),
		iceberg.AddPartitionFieldBySourceID(PartitionSourceID, PartitionFieldName,
			iceberg.IdentityTransform{}, schema, &id),
	)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("icebergmeta: partition spec: %w", err)
	}

	return spec, nil
}

func checkSchema(schema *iceberg.Schema) error {
	if schema == nil {
		return fmt.Errorf("%w: nil", ErrInvalidSchema)
	}
	fields := schema.Fields()
	if len(fields) == 0 || fields[0].ID != KafkaFieldID || fields[0].Name != "_kafka" {
		return fmt.Errorf("%w: first column must be _kafka with field id %d", ErrInvalidSchema, KafkaFieldID)
	}
	kafka, ok := fields[0].Type.(*iceberg.StructType)
	if !ok {
		return fmt.Errorf("%w: _kafka must be a struct, not %s", ErrInvalidSchema, fields[0].Type)
	}
	for _, f := range kafka.FieldList {
		if f.ID != PartitionSourceID {
			continue
		}
		if f.Name != "partition" || !f.Type.Equals(iceberg.PrimitiveTypes.Int32) {
			return fmt.Errorf("%w: field id %d must be _kafka.partition int, not %s %s",
				ErrInvalidSchema, PartitionSourceID, f.Name, f.Type)
		}

		return nil
	}

	return fmt.Errorf("%w: _kafka has no field id %d (partition)", ErrInvalidSchema, PartitionSourceID)
}

// NewTable returns the metadata JSON of a new, empty table at location
// (for example "s3://mink/demo/earthquakes"), partitioned by identity on
// _kafka.partition (PartitionSpec), unsorted, with no snapshot, and the
// location its metadata file should be stored at
// ("<location>/metadata/00000-<uuid>.metadata.json", uuid = tableUUID).
//
// The schema is kept as given: its field ids are the table's (codec assigns
// them once, docs/design.md §4.2), and its schema id becomes 0. props are the
// table's properties as given, plus write.metadata.previous-versions-max =
// DefaultMetadataPreviousVersionsMax unless props set it; reserved keys
// (format-version, uuid, …) are an error. last-updated-ms is the wall clock: iceberg-go offers no way to
// set it, and the first Append replaces it.
func NewTable(schema *iceberg.Schema, location string, tableUUID uuid.UUID, props map[string]string) (metadataLocation string, metadataJSON []byte, err error) {
	location = strings.TrimRight(location, "/")
	if location == "" {
		return "", nil, fmt.Errorf("icebergmeta: new table: empty location")
	}
	if tableUUID == uuid.Nil {
		return "", nil, fmt.Errorf("icebergmeta: new table: nil table uuid")
	}
	spec, err := PartitionSpec(schema)
	if err != nil {
		return "", nil, err
	}

	// The builder, not table.NewMetadataWithUUID: that one reassigns every
	// field id in depth-first order, which would silently renumber a
	// schema whose ids codec assigned otherwise. AddSchema also sets the
	// schema's id, so it gets a copy.
	sc := iceberg.NewSchemaWithIdentifiers(0, schema.IdentifierFieldIDs, schema.Fields()...)
	if _, ok := props[PropMetadataPreviousVersionsMax]; !ok {
		props = maps.Clone(props)
		if props == nil {
			props = map[string]string{}
		}
		props[PropMetadataPreviousVersionsMax] = strconv.Itoa(DefaultMetadataPreviousVersionsMax)
	}
	b, err := table.NewMetadataBuilder(FormatVersion)
	if err != nil {
		return "", nil, err
	}
	unsorted := table.UnsortedSortOrder
	steps := []func() error{
		func() error { return b.SetUUID(tableUUID) },
		func() error { return b.AddSchema(sc) },
		func() error { return b.SetCurrentSchemaID(-1) },
		func() error { return b.AddSortOrder(&unsorted) },
		func() error { return b.SetDefaultSortOrderID(-1) },
		func() error { return b.AddPartitionSpec(&spec, true) },
		func() error { return b.SetDefaultSpecID(-1) },
		func() error { return b.SetLoc(location) },
		func() error { return b.SetProperties(props) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", nil, fmt.Errorf("icebergmeta: new table: %w", err)
		}
	}
	md, err := b.Build()
	if err != nil {
		return "", nil, fmt.Errorf("icebergmeta: new table: %w", err)
	}
	metadataJSON, err = json.Marshal(md)
	if err != nil {
		return "", nil, fmt.Errorf("icebergmeta: new table: %w", err)
	}

	return metadataFileLocation(location, 0, tableUUID), metadataJSON, nil
}

// PropMetadataPreviousVersionsMax is Iceberg's bound on the metadata-log
// (the previous metadata files a metadata JSON lists).
const PropMetadataPreviousVersionsMax = "write.metadata.previous-versions-max"

// DefaultMetadataPreviousVersionsMax is the metadata-log bound of a new
// table. Java's default is 100; a Mink table commits on every load that
// finds new records, each metadata file can be hundreds of KiB, and
// collection keeps the files the log names, so Mink keeps 10.
const DefaultMetadataPreviousVersionsMax = 10

func metadataFileLocation(location string, version int, id uuid.UUID) string {
	return fmt.Sprintf("%s/metadata/%05d-%s.metadata.json", location, version, id)
}

// nextMetadata builds b and encodes it as version+1 of base's metadata
// files, named by id (a random one when zero): the last step of every
// metadata-only update. what names the update in errors ("icebergmeta:
// what: ...").
func nextMetadata(b *table.MetadataBuilder, base table.Metadata, version int, id uuid.UUID, what string) (*MetadataUpdate, error) {
	md, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: %s: build metadata: %w", what, err)
	}
	js, err := marshalMetadata(md)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: %s: encode metadata: %w", what, err)
	}
	if id == uuid.Nil {
		id = uuid.New()
	}
	loc := metadataFileLocation(strings.TrimRight(base.Location(), "/"), version+1, id)
	return &MetadataUpdate{MetadataLocation: loc, Metadata: js, Parsed: md}, nil
}
