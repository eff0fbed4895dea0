package transforms_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) {
	ptest.Main(m)
}

// repoRoot is the repository root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// fixture is a path under the repository's testdata/.
func fixture(rel string) string { return filepath.Join(repoRoot(), "testdata", rel) }

// sharedData is a path under ../shared/data, or skips the test with a clear
// message when that folder is absent.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(repoRoot(), "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: real data %s is absent (the ../shared/data folder beside the repository)", p)
	}
	return p
}
