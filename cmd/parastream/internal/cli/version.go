package cli

import (
	"runtime/debug"
	"strings"
)

// KeyModules are the dependencies whose versions a run reports.
func KeyModules() []string {
	return []string{
		"github.com/apache/beam/sdks/v2",
		"github.com/segmentio/kafka-go",
		"github.com/parquet-go/parquet-go",
		"gorgonia.org/gorgonia",
		"github.com/twmb/franz-go",
		"github.com/klauspost/compress",
	}
}

// BuildVersion is stamped, the version set at build time, or, when that
// is "dev", "dev+" and the commit built from where the build recorded it.
func BuildVersion(stamped string) string {
	if stamped != "dev" {
		return stamped
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev+" + s.Value[:12]
			}
		}
	}
	return stamped
}

// LinkedModules reports the versions of the key modules (KeyModules)
// linked into this binary, by module path.
func LinkedModules() map[string]string {
	out := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range bi.Deps {
		for _, k := range KeyModules() {
			if d.Path == k || strings.HasPrefix(d.Path, k+"/") {
				out[d.Path] = d.Version
			}
		}
	}
	return out
}
