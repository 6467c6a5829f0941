package protobuf

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/minkhq/mink/codec/wire"
)

// message compiles s (with its references as imports, and the standard
// google/protobuf/*.proto files) and returns the message the Confluent
// message index path selects: [0] (or an empty path) is the file's first
// top-level message, [1, 0] the first message nested in the second.
func message(s *wire.Schema, indexes []int) (protoreflect.MessageDescriptor, error) {
	if s == nil {
		return nil, errors.New("protobuf: nil schema")
	}
	if s.Type != wire.TypeProtobuf {
		return nil, fmt.Errorf("protobuf: schema type %q, not %s", s.Type, wire.TypeProtobuf)
	}
	files := map[string]string{}
	if err := addReferences(files, s.References, 0); err != nil {
		return nil, err
	}
	// The registry gives the main schema no file name; pick one no
	// reference uses.
	main := "mink-schema.proto"
	for i := 1; ; i++ {
		if _, ok := files[main]; !ok {
			break
		}
		main = "mink-schema-" + strconv.Itoa(i) + ".proto"
	}
	files[main] = s.Text
	sources := &protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(files)}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
			if text, ok := files[path]; ok {
				if fdp := serializedDescriptor(text); fdp != nil {
					fdp.Name = proto.String(path)
					return protocompile.SearchResult{Proto: fdp}, nil
				}
			}
			return sources.FindFileByPath(path)
		})),
	}
	compiled, err := c.Compile(context.Background(), main)
	if err != nil {
		return nil, fmt.Errorf("protobuf: compile schema %d: %w", s.ID, err)
	}
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	msgs := compiled[0].Messages()
	var md protoreflect.MessageDescriptor
	for depth, i := range indexes {
		if i < 0 || i >= msgs.Len() {
			return nil, fmt.Errorf("protobuf: message index %d at depth %d of %v: the schema has %d messages there", i, depth, indexes, msgs.Len())
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md, nil
}

// addReferences adds refs and their references, by import path, to files.
func addReferences(files map[string]string, refs []wire.Reference, depth int) error {
	if depth > 64 {
		return errors.New("protobuf: schema references nested deeper than 64")
	}
	for _, r := range refs {
		if r.Schema.Type != "" && r.Schema.Type != wire.TypeProtobuf {
			return fmt.Errorf("protobuf: reference %q is a %s schema", r.Name, r.Schema.Type)
		}
		if old, ok := files[r.Name]; ok && old != r.Schema.Text {
			return fmt.Errorf("protobuf: two different schemas are referenced as %q", r.Name)
		}
		files[r.Name] = r.Schema.Text
		if err := addReferences(files, r.Schema.References, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// serializedDescriptor returns the FileDescriptorProto that text holds when
// it is one in base64 (standard alphabet, padded), else nil. A registry may
// hold a Protobuf schema in that form rather than as .proto text: the
// Confluent registry accepts it when a schema is registered and answers it
// for ?format=serialized, confluent-kafka-python's ProtobufSerializer
// registers its schemas that way, and Apicurio Registry stores and answers
// them as registered. Confluent's own reader (ProtobufSchema in
// kafka-protobuf-provider) accepts both. .proto text is never valid base64:
// it has spaces, semicolons or braces.
func serializedDescriptor(text string) *descriptorpb.FileDescriptorProto {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(b, &fdp); err != nil {
		return nil
	}
	for _, m := range fdp.MessageType {
		setJSONNames(m)
	}
	for _, f := range fdp.Extension {
		setJSONName(f)
	}
	return &fdp
}

// setJSONNames gives each field of m (nested messages too) without a
// json_name its default one. protoc leaves json_name out of the
// descriptors it embeds in generated code (what confluent-kafka-python
// registers), and bufbuild/protocompile, linking a descriptor without its
// source, takes a field without one for a field whose custom JSON name is
// "", so that every two fields conflict ("custom JSON name "" conflicts
// with custom JSON name of field id"). Mink names columns after the fields
// and never uses JSON names.
func setJSONNames(m *descriptorpb.DescriptorProto) {
	for _, f := range m.Field {
		setJSONName(f)
	}
	for _, f := range m.Extension {
		setJSONName(f)
	}
	for _, n := range m.NestedType {
		setJSONNames(n)
	}
}

// setJSONName sets f's json_name, when unset or empty, to protoc's default:
// the name with each underscore removed and the letter after it upper-cased
// (protobuf's descriptor.proto, FieldDescriptorProto.json_name).
func setJSONName(f *descriptorpb.FieldDescriptorProto) {
	if f.GetJsonName() != "" {
		return
	}
	var b strings.Builder
	upper := false
	for _, r := range f.GetName() {
		switch {
		case r == '_':
			upper = true
		case upper && 'a' <= r && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	f.JsonName = proto.String(b.String())
}
