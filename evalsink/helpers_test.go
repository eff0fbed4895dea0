package evalsink_test

import (
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
)

func TestMain(m *testing.M) {
	code := ptest.MainRet(m)
	fixtures.Cleanup()
	classifySets.Remove()
	os.Exit(code)
}

// The shared test fixtures: see package evaltest.
var fixtures evaltest.Fixtures

var (
	sharedSets     = fixtures.SharedSets
	rankingSetsDir = fixtures.RankingSets
	fixtureSetsDir = fixtures.FixtureSets
	loadSets       = evaltest.LoadSets
	vocabulary     = evaltest.Vocabulary
	checkpoint     = evaltest.Checkpoint
	testLogger     = evaltest.Logger
)

// pythonWith: see evaltest.PythonWith.
func pythonWith(t *testing.T, modules, pkg, require string) string {
	t.Helper()
	return evaltest.PythonWith(t, modules, pkg, require)
}

// runCheck: see evaltest.Run.
func runCheck(t *testing.T, py, script string, in, out any) {
	t.Helper()
	evaltest.Run(t, py, script, in, out)
}
