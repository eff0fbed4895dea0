package main

import (
	"strings"
	"testing"
)

func TestAdaptHelpAndUsage(t *testing.T) {
	code, out, errOut := runCLI(t, "adapt", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("adapt --help: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"input:", "--checkpoint", "--eval", "--seed", "example:\n  parastream adapt"} {
		if !strings.Contains(out, want) {
			t.Errorf("adapt --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nother:") {
		t.Errorf("adapt --help has ungrouped flags:\n%s", out)
	}
	if code, _, errOut := runCLI(t, "adapt", "--checkpoint", "ck"); code != 2 || !strings.Contains(errOut, "--eval are required") {
		t.Errorf("adapt without --eval: exit %d, %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "eval", "run", "--help"); code != 0 || !strings.Contains(out, "--adapt") {
		t.Errorf("eval run --help lacks --adapt: exit %d\n%s", code, out)
	}
}
