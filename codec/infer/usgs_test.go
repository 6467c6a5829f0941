package infer_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/infer"
)

const usgsPath = "/work/shared/data/usgs-earthquakes-week.geojson"

func usgsFeatures(t testing.TB) []json.RawMessage {
	b, err := os.ReadFile(usgsPath)
	if os.IsNotExist(err) {
		t.Skip("no USGS feed at " + usgsPath)
	}
	require.NoError(t, err)
	var fc struct {
		Features []json.RawMessage `json:"features"`
	}
	require.NoError(t, json.Unmarshal(b, &fc))
	return fc.Features
}

// TestInferUSGS infers the schema of the USGS week feed (each feature a
// record), decodes every feature with it through codec and Arrow
// builders, and compares the values read back with the source, field by
// field.
func TestInferUSGS(t *testing.T) {
	features := usgsFeatures(t)
	var inf infer.Inferrer
	for _, f := range features {
		require.NoError(t, inf.Add(f))
	}
	st, err := inf.Struct()
	require.NoError(t, err)
	require.Empty(t, inf.Omitted())
	require.Equal(t, "struct<1 type: string, "+
		"2 properties: struct<3 mag: double, 4 place: string, 5 time: long, 6 updated: long, 7 tz: long, "+
		"8 url: string, 9 detail: string, 10 felt: long, 11 cdi: double, 12 mmi: double, 13 alert: string, "+
		"14 status: string, 15 tsunami: long, 16 sig: long, 17 net: string, 18 code: string, 19 ids: string, "+
		"20 sources: string, 21 types: string, 22 nst: long, 23 dmin: double, 24 rms: double, 25 gap: double, "+
		"26 magType: string, 27 type: string, 28 title: string>, "+
		"29 geometry: struct<30 type: string, 31 coordinates: list<32: double>>, "+
		"33 id: string>", show(st))

	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, st.FieldList...))
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for i, f := range features {
		require.NoError(t, dec.Decode(f), "feature %d", i)
		require.Zero(t, dec.Unknown(), "feature %d", i)
		rb.Field(0).AppendNull() // _kafka is not the decoder's business
		dec.Append(rb.Fields()[1:])
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	require.EqualValues(t, len(features), rec.NumRows())

	props := rec.Column(2).(*array.Struct)
	mag := props.Field(0).(*array.Float64)
	place := props.Field(1).(*array.String)
	tm := props.Field(2).(*array.Int64)
	felt := props.Field(7).(*array.Int64)
	cdi := props.Field(8).(*array.Float64)
	coords := rec.Column(3).(*array.Struct).Field(1).(*array.List)
	cvals := coords.ListValues().(*array.Float64)
	ids := rec.Column(4).(*array.String)
	for i, f := range features {
		var src struct {
			Properties struct {
				Mag   *float64
				Place *string
				Time  int64
				Felt  *int64
				CDI   *float64 `json:"cdi"`
			}
			Geometry struct{ Coordinates []float64 }
			ID       string
		}
		require.NoError(t, json.Unmarshal(f, &src))
		p := src.Properties
		if p.Mag == nil {
			require.True(t, mag.IsNull(i))
		} else {
			require.Equal(t, *p.Mag, mag.Value(i), "feature %d mag", i)
		}
		if p.Place != nil {
			require.Equal(t, *p.Place, place.Value(i))
		}
		require.Equal(t, p.Time, tm.Value(i), "feature %d time", i)
		if p.Felt == nil {
			require.True(t, felt.IsNull(i), "feature %d felt", i)
		} else {
			require.Equal(t, *p.Felt, felt.Value(i), "feature %d felt", i)
		}
		if p.CDI == nil {
			require.True(t, cdi.IsNull(i), "feature %d cdi", i)
		} else {
			require.Equal(t, *p.CDI, cdi.Value(i), "feature %d cdi", i)
		}
		start, end := coords.ValueOffsets(i)
		require.Equal(t, src.Geometry.Coordinates, cvals.Float64Values()[start:end], "feature %d coordinates", i)
		require.Equal(t, src.ID, ids.Value(i))
	}
}
