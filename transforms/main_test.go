package transforms_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/internal/testenv"
)

func TestMain(m *testing.M) {
	ptest.Main(m)
}

// fixture and sharedData locate test files (see testenv).
func fixture(rel string) string { return testenv.Fixture(rel) }

func sharedData(t testing.TB, rel string) string {
	t.Helper()
	return testenv.SharedData(t, rel)
}
