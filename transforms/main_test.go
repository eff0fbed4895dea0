package transforms_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/internal/testenv"
)

func TestMain(m *testing.M) {
	ptest.Main(m)
}

// fixture locates a test file (see testenv).
func fixture(rel string) string { return testenv.Fixture(rel) }
