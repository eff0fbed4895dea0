package main

import (
	"context"
	"fmt"
	"runtime"
	"sort"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "parastream version")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "parastream %s (%s, %s/%s)\n", cli.BuildVersion(version), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	deps := cli.LinkedModules()
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(e.stdout, "  %s %s\n", n, deps[n])
	}
	return nil
}
