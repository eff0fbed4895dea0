package cli_test

import (
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
)

func TestCount(t *testing.T) {
	for in, want := range map[string]int64{"10": 10, "10k": 10000, "2.5k": 2500, "10M": 10000000, "1e6": 1000000, "1_000": 1000, "0": 0} {
		var r cli.Count
		if err := r.Set(in); err != nil || int64(r) != want {
			t.Errorf("%s: %d, %v", in, r, err)
		}
	}
	for _, in := range []string{"ten", "-5", "1.5", ""} {
		var r cli.Count
		if r.Set(in) == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
