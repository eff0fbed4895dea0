package text_test

import (
	"testing"

	"github.com/parastream/parastream/internal/testenv"
)

// sharedData locates a file of the shared data, or skips (see testenv).
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	return testenv.SharedData(t, rel)
}
