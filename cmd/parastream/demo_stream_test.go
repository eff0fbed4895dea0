package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/demo"
)

func TestDemoStream(t *testing.T) {
	root := writeShards(t, 2500, 1000)
	var out, errb bytes.Buffer
	if err := demo.Stream(context.Background(), &out, root); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "parastream.sts.train") || !strings.Contains(out.String(), "1 topics, 2500 rows published and read back") {
		t.Errorf("output:\n%s", out.String())
	}
}
