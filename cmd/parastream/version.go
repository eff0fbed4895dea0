package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// keyModules are the dependencies whose versions a run reports.
func keyModules() []string {
	return []string{
		"github.com/apache/beam/sdks/v2",
		"github.com/segmentio/kafka-go",
		"github.com/parquet-go/parquet-go",
		"gorgonia.org/gorgonia",
		"github.com/twmb/franz-go",
		"github.com/klauspost/compress",
	}
}

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "parastream version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "parastream %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	deps := linkedModules()
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

// buildVersion is the version stamped at build time, or the module's.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev+" + s.Value[:12]
			}
		}
	}
	return version
}

// linkedModules reports the versions of the key modules linked into this
// binary.
func linkedModules() map[string]string {
	out := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range bi.Deps {
		for _, k := range keyModules() {
			if d.Path == k || strings.HasPrefix(d.Path, k+"/") {
				out[d.Path] = d.Version
			}
		}
	}
	return out
}
