package text_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoBeam checks that the package builds without Beam: a program that
// only normalises or tokenises text must not link the Beam SDK.
func TestNoBeam(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/apache/beam/") {
			t.Errorf("transforms/text depends on %s: it must build without Beam", dep)
		}
	}
}
