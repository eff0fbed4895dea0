package corpora

import (
	"math"
	"strconv"
	"testing"
)

// TestPlainInteger: where plainInteger parses a number, it gives what
// strconv.ParseInt, or failing that math.Floor of strconv.ParseFloat, gives.
func TestPlainInteger(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "7", "007", "-12", "1706745655", "1706745655.0", "1706745655.000",
		"-3.0", "-0.0", "999999999999999999", "-999999999999999999", "999999999999999.0",
		"9999999999999999.0", "1000000000000000000", "1.5", "-1.5", "1.", ".0", "-", "", "1e3",
		"1.0e3", "12a", "+5", "123456789012345678.0", "0.00000000000000000001",
	} {
		want, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || math.Abs(f) >= 1<<63 {
				if n, ok := plainInteger([]byte(s)); ok {
					t.Errorf("plainInteger(%q) = %d, true; strconv refuses it", s, n)
				}
				continue
			}
			want = int64(math.Floor(f))
		}
		if n, ok := plainInteger([]byte(s)); ok && n != want {
			t.Errorf("plainInteger(%q) = %d, want %d", s, n, want)
		}
	}
	for _, s := range []string{"1706745655", "1706745655.0", "-3", "0"} {
		if _, ok := plainInteger([]byte(s)); !ok {
			t.Errorf("plainInteger(%q) refused a plain integer", s)
		}
	}
}

// FuzzPlainInteger: plainInteger never disagrees with strconv.
func FuzzPlainInteger(f *testing.F) {
	for _, s := range []string{"1706745655.0", "-12", "999999999999999.000", "1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := plainInteger([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fl, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				t.Fatalf("plainInteger(%q) = %d, true; strconv refuses it", s, n)
			}
			want = int64(math.Floor(fl))
		}
		if n != want {
			t.Fatalf("plainInteger(%q) = %d, want %d", s, n, want)
		}
	})
}
