package runlog

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Keep is how many logs of failed runs Start keeps: the newest.
const Keep = 20

// Dir is where run logs go: parastream/logs under the user's cache
// directory ($XDG_CACHE_HOME, or ~/.cache, on Linux), or under the
// temporary directory when there is none. A successful run removes its
// log; the logs of failed runs stay there, the newest Keep of them.
func Dir() string {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, "parastream", "logs")
}

// prune removes dir's run logs (parastream-*.log) but the newest keep-1,
// so that with the one a run is about to write keep remain. Errors are
// ignored: a log left over costs a little space.
func prune(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type log struct {
		name string
		mod  int64
	}
	var logs []log
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "parastream-") || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			logs = append(logs, log{e.Name(), fi.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(logs, func(a, b log) int { return cmp.Compare(b.mod, a.mod) }) // newest first
	for i, l := range logs {
		if i >= keep-1 {
			os.Remove(filepath.Join(dir, l.name))
		}
	}
}
