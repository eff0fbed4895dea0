package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/demo"
)

func TestDemoEval(t *testing.T) {
	bin := binary(t)
	eval, vocab := evalFixtures(t, bin)
	ck := saveCheckpoint(t, filepath.Join(t.TempDir(), "demo", "final"), vocab, 1)
	var out bytes.Buffer
	if err := (demo.Config{Stdout: &out, Stderr: &out}).Eval(context.Background(), ck, eval, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Dataset | n | demo (avg, step 0) |", "| 2016 mini | 3 † |", "| **STS 2016 mean** | 3 † |", "| SICK ", "| **Average of 1 set**: SICK test | 4 † |", "† fewer than 100 pairs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
