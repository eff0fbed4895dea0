package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLogsLiveInTheCacheAndArePruned: a run's log goes under the user's
// cache directory, and Start keeps the newest Keep logs of failed runs.
func TestLogsLiveInTheCacheAndArePruned(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	dir := Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i := range Keep + 5 {
		p := filepath.Join(dir, fmt.Sprintf("parastream-extract-%02d.log", i))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old.Add(time.Duration(i)*time.Second), old.Add(time.Duration(i)*time.Second))
	}
	l, err := Start("extract", false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(l.f.Name()) != dir {
		t.Errorf("the run's log is %s, want it in %s", l.f.Name(), dir)
	}
	l.Failed(fmt.Errorf("boom")) // kept, as a failed run's
	logs, _ := filepath.Glob(filepath.Join(dir, "parastream-*.log"))
	if len(logs) != Keep {
		t.Errorf("%d logs, want the newest %d", len(logs), Keep)
	}
	if _, err := os.Stat(filepath.Join(dir, "parastream-extract-00.log")); err == nil {
		t.Error("the oldest log was kept")
	}
}
