package adapt_test

import (
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
)

// fixtures are the evaluation sets this package's tests extract.
var fixtures evaltest.Fixtures

func TestMain(m *testing.M) {
	code := ptest.MainRet(m)
	fixtures.Cleanup()
	os.Exit(code)
}
