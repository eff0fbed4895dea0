package cpu

import (
	"errors"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/cpu/cblas"
)

// requireOpenBLAS, when set (CI sets it), makes a missing CBLAS a failure
// instead of a skip.
const requireOpenBLAS = "PARASTREAM_REQUIRE_OPENBLAS"

// forEachBLAS runs f once on gonum's BLAS and once on the machine's CBLAS
// (skipped with a message where there is none, failed under
// requireOpenBLAS), then goes back to the BLAS chosen before.
func forEachBLAS(t *testing.T, f func(t *testing.T)) {
	before := BLAS()
	t.Cleanup(func() { restoreBLAS(t, before) })
	for _, choice := range []string{BLASGo, BLASOpenBLAS} {
		t.Run("blas="+choice, func(t *testing.T) {
			info, err := UseBLAS(choice, cblas.Options{})
			if err != nil {
				if os.Getenv(requireOpenBLAS) != "" {
					t.Fatalf("%s is set and %v", requireOpenBLAS, err)
				}
				t.Skipf("no CBLAS here (apt-get install libopenblas0): %v", err)
			}
			t.Logf("BLAS: %v", info)
			f(t)
		})
	}
}

func restoreBLAS(t *testing.T, info BLASInfo) {
	choice := BLASOpenBLAS
	if info.Library == "" {
		choice = BLASGo
	}
	if _, err := UseBLAS(choice, cblas.Options{}); err != nil {
		t.Error(err)
	}
}

// TestUseBLAS: openblas without a library is an error naming what was
// tried; auto then runs on gonum and says why; go is gonum; an unknown
// choice is refused. Each choice is what gorgonia and gonum's blas32 use.
func TestUseBLAS(t *testing.T) {
	before := BLAS()
	defer restoreBLAS(t, before)
	none := cblas.Options{Names: []string{"libparastream-missing-blas.so.0"}}

	_, err := UseBLAS(BLASOpenBLAS, none)
	if !errors.Is(err, cblas.ErrNotFound) || !strings.Contains(err.Error(), "--blas openblas") ||
		!strings.Contains(err.Error(), "libparastream-missing-blas.so.0") || !strings.Contains(err.Error(), "libopenblas0") {
		t.Errorf("openblas without a library: error %v", err)
	}

	info, err := UseBLAS(BLASAuto, none)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "gonum" || !strings.Contains(info.String(), "libparastream-missing-blas.so.0") || BLAS() != info {
		t.Errorf("auto without a library: %+v (BLAS() %+v)", info, BLAS())
	}
	if _, ok := G.WhichBLAS().(gonum.Implementation); !ok {
		t.Errorf("auto without a library: gorgonia runs on %T", G.WhichBLAS())
	}

	if info, err = UseBLAS(BLASGo, cblas.Options{}); err != nil || info.String() != "gonum (pure Go)" {
		t.Errorf("go: %v, %v", info, err)
	}
	if _, err := UseBLAS("mkl", cblas.Options{}); err == nil || !strings.Contains(err.Error(), "auto, go or openblas") {
		t.Errorf("unknown choice: error %v", err)
	}
	if BLAS().Name != "gonum" {
		t.Errorf("a refused choice changed the BLAS to %v", BLAS())
	}

	info, err = UseBLAS(BLASAuto, cblas.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Library == "" {
		if os.Getenv(requireOpenBLAS) != "" {
			t.Fatalf("%s is set and auto found no library: %v", requireOpenBLAS, info)
		}
		t.Skipf("no CBLAS here: %v", info)
	}
	if _, ok := G.WhichBLAS().(cblas.Implementation); !ok {
		t.Errorf("auto with %v: gorgonia runs on %T", info, G.WhichBLAS())
	}
	if _, ok := blas32.Implementation().(cblas.Implementation); !ok {
		t.Errorf("auto with %v: blas32 runs on %T", info, blas32.Implementation())
	}
}
