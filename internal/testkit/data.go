package testkit

import (
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/devenv"
)

// USGSEvents returns the events of the USGS feed in the shared data
// directory (devenv.FindData), and skips the test when it is absent.
func USGSEvents(t testing.TB) []devenv.Event {
	t.Helper()
	path, ok := devenv.FindData(devenv.USGSFile)
	if !ok {
		t.Skip("shared data absent: ../shared/data/" + devenv.USGSFile)
	}
	events, err := devenv.LoadUSGS(path)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return events
}

// KafkaField is the _kafka struct column that opens every Mink table's
// schema (docs/design.md §4.2), field ids 1 to 10.
func KafkaField() iceberg.NestedField {
	return iceberg.NestedField{ID: 1, Name: "_kafka", Required: true, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 2, Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		{ID: 3, Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 4, Name: "timestamp", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		{ID: 5, Name: "timestamp_type", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		{ID: 6, Name: "key", Type: iceberg.PrimitiveTypes.Binary},
		{ID: 7, Name: "headers", Required: true, Type: &iceberg.ListType{
			ElementID: 8, ElementRequired: true,
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 9, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: true},
				{ID: 10, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
			}},
		}},
	}}}
}

// USGSSchema is an Iceberg schema (spec JSON) of the USGS GeoJSON feed's
// features, as the codec and datafile tests and benchmarks declare it (the
// demo table's, devenv.EarthquakesSchema, lists more fields).
const USGSSchema = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"type","required":true,"type":"string"},
 {"id":2,"name":"properties","required":true,"type":{"type":"struct","fields":[
   {"id":3,"name":"mag","required":false,"type":"double"},
   {"id":4,"name":"place","required":false,"type":"string"},
   {"id":5,"name":"time","required":true,"type":"timestamptz"},
   {"id":6,"name":"updated","required":false,"type":"timestamptz"},
   {"id":7,"name":"tz","required":false,"type":"int"},
   {"id":8,"name":"felt","required":false,"type":"int"},
   {"id":9,"name":"cdi","required":false,"type":"double"},
   {"id":10,"name":"tsunami","required":false,"type":"int"},
   {"id":11,"name":"sig","required":false,"type":"int"},
   {"id":12,"name":"net","required":false,"type":"string"},
   {"id":13,"name":"nst","required":false,"type":"int"},
   {"id":14,"name":"dmin","required":false,"type":"double"},
   {"id":15,"name":"rms","required":false,"type":"double"},
   {"id":16,"name":"gap","required":false,"type":"double"},
   {"id":17,"name":"magType","required":false,"type":"string"},
   {"id":18,"name":"title","required":false,"type":"string"}]}},
 {"id":19,"name":"geometry","required":false,"type":{"type":"struct","fields":[
   {"id":20,"name":"type","required":false,"type":"string"},
   {"id":21,"name":"coordinates","required":false,"type":{"type":"list","element-id":22,"element":"double","element-required":true}}]}},
 {"id":23,"name":"id","required":true,"type":"string"}
]}`
