package stream_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// normalized returns r with empty lists and maps as nil, the way a Parquet
// round trip may give them back.
func normalized(r shards.Row) shards.Row {
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 {
			f.SetZero()
		}
	}
	return r
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	rows := genRows("sts", "train", 3, 500)
	rows[7].Label = nil
	rows[8].Meta = nil
	rows[9].A = "ünïcödé 字"
	b := stream.Batch{Shard: "sts/train/part-00000-of-00001.parquet", First: 1000, Rows: rows}
	m, err := stream.Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.Key); got != b.Shard {
		t.Errorf("key %q, want the shard", got)
	}
	for key, want := range map[string]string{
		stream.HeaderSchemaVersion: fmt.Sprint(shards.SchemaVersion),
		stream.HeaderShard:         b.Shard,
		stream.HeaderRows:          "1000-1500",
	} {
		if got := header(m, key); got != want {
			t.Errorf("header %s = %q, want %q", key, got, want)
		}
	}
	if got := header(m, stream.HeaderChecksum); !strings.HasPrefix(got, "crc32c:") || len(got) != 15 {
		t.Errorf("header %s = %q", stream.HeaderChecksum, got)
	}
	again, err := stream.Encode(b)
	if err != nil || string(again.Value) != string(m.Value) {
		t.Errorf("encoding the same batch twice gave other bytes (err %v)", err)
	}
	got, err := stream.Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shard != b.Shard || got.First != 1000 || got.End() != 1500 || len(got.Rows) != len(rows) {
		t.Fatalf("decoded %s %d-%d (%d rows)", got.Shard, got.First, got.End(), len(got.Rows))
	}
	for i := range rows {
		if !reflect.DeepEqual(normalized(got.Rows[i]), normalized(rows[i])) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got.Rows[i], rows[i])
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	if _, err := stream.Encode(stream.Batch{Shard: "s"}); err == nil {
		t.Error("an empty batch was encoded")
	}
	rows := genRows("sts", "train", 1, 3)
	rows[2].B = "bad \xff"
	_, err := stream.Encode(stream.Batch{Shard: "s", Rows: rows})
	var re *shards.RowError
	if !errors.As(err, &re) || re.Index != 2 || re.Column != "b" {
		t.Errorf("invalid UTF-8: %v, want a RowError for row 2 column b", err)
	}
}

// withHeader returns a copy of m with header key set to v (or removed when
// v is nil).
func withHeader(m kafka.Message, key string, v []byte) kafka.Message {
	c := m
	c.Headers = nil
	for _, h := range m.Headers {
		if h.Key != key {
			c.Headers = append(c.Headers, h)
		}
	}
	if v != nil {
		c.Headers = append(c.Headers, kafka.Header{Key: key, Value: v})
	}
	return c
}

func TestDecodeErrors(t *testing.T) {
	good, err := stream.Encode(stream.Batch{Shard: "sts/train/p.parquet", First: 10, Rows: genRows("sts", "train", 5, 20)})
	if err != nil {
		t.Fatal(err)
	}
	flipped := good
	flipped.Value = append([]byte(nil), good.Value...)
	flipped.Value[len(flipped.Value)/2] ^= 1
	// A value that passes its checksum but is not Parquet.
	junk := []byte("PAR1 nothing here")
	notParquet := withHeader(good, stream.HeaderChecksum, fmt.Appendf(nil, "crc32c:%08x", crc32.Checksum(junk, crc32.MakeTable(crc32.Castagnoli))))
	notParquet.Value = junk
	short := withHeader(good, stream.HeaderRows, []byte("10-29"))
	twice := good
	twice.Headers = append(append([]kafka.Header(nil), good.Headers...), kafka.Header{Key: stream.HeaderRows, Value: []byte("10-30")})
	otherKey := good
	otherKey.Key = []byte("other")

	for _, c := range []struct {
		name string
		m    kafka.Message
		is   error
		says string
	}{
		{"no shard", withHeader(good, stream.HeaderShard, nil), stream.ErrHeader, "parastream.shard missing"},
		{"no rows", withHeader(good, stream.HeaderRows, nil), stream.ErrHeader, "parastream.rows missing"},
		{"header twice", twice, stream.ErrHeader, "parastream.rows given twice"},
		{"newer schema", withHeader(good, stream.HeaderSchemaVersion, []byte("99")), stream.ErrSchemaVersion, "version 99"},
		{"schema not a number", withHeader(good, stream.HeaderSchemaVersion, []byte("one")), stream.ErrHeader, `"one"`},
		{"range reversed", withHeader(good, stream.HeaderRows, []byte("30-10")), stream.ErrHeader, "0 <= first < end"},
		{"range malformed", withHeader(good, stream.HeaderRows, []byte("10")), stream.ErrHeader, "first-end"},
		{"range huge", withHeader(good, stream.HeaderRows, []byte("0-99999999")), stream.ErrHeader, "more than"},
		{"key is not the shard", otherKey, stream.ErrHeader, `key "other"`},
		{"checksum malformed", withHeader(good, stream.HeaderChecksum, []byte("md5:00")), stream.ErrHeader, "crc32c"},
		{"value changed", flipped, stream.ErrChecksum, "the header says"},
		{"row count", short, stream.ErrPayload, "holds 20 rows, the header 19"},
		{"not parquet", notParquet, stream.ErrPayload, "not a Parquet file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := stream.Decode(c.m)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Decode: %v; want %v saying %q", err, c.is, c.says)
			}
		})
	}
}

// FuzzDecode feeds the decoder arbitrary headers and values: it never
// panics, and what it accepts re-encodes to a message that decodes to the
// same rows.
func FuzzDecode(f *testing.F) {
	for i, n := range []int{1, 3, 40} {
		m, err := stream.Encode(stream.Batch{Shard: "sts/train/p.parquet", First: int64(i * 100), Rows: genRows("sts", "train", uint64(i), n)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(m.Key, m.Value, header(m, stream.HeaderSchemaVersion), header(m, stream.HeaderShard), header(m, stream.HeaderRows), header(m, stream.HeaderChecksum))
	}
	f.Add([]byte("k"), []byte("PAR1\x00\x00\x00\x00PAR1"), "1", "k", "0-1", "crc32c:00000000")
	enc := stream.NewEncoder() // one for all the inputs, as a publisher keeps one
	f.Fuzz(func(t *testing.T, key, value []byte, version, shard, rows, checksum string) {
		m := kafka.Message{Key: key, Value: value, Headers: []kafka.Header{
			{Key: stream.HeaderSchemaVersion, Value: []byte(version)},
			{Key: stream.HeaderShard, Value: []byte(shard)},
			{Key: stream.HeaderRows, Value: []byte(rows)},
			{Key: stream.HeaderChecksum, Value: []byte(checksum)},
		}}
		b, err := stream.Decode(m)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no message")
			}
			return
		}
		again, err := enc.Encode(b)
		if err != nil {
			t.Fatalf("re-encoding an accepted batch: %v", err)
		}
		b2, err := stream.Decode(again)
		if err != nil {
			t.Fatalf("decoding a re-encoded batch: %v", err)
		}
		for i := range b.Rows {
			if !reflect.DeepEqual(normalized(b2.Rows[i]), normalized(b.Rows[i])) {
				t.Fatalf("round trip changed row %d: %+v became %+v", i, b.Rows[i], b2.Rows[i])
			}
		}
	})
}
