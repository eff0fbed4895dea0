package progress_test

import (
	"testing"
	"time"

	"github.com/parastream/parastream/internal/progress"
)

func TestETA(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{1200, 6000, 4 * time.Second, "1200/6000 rows (20%), 300 rows/s, ETA 16s"},
		{100, 100000, 10 * time.Second, "100/100000 rows (0%), 10 rows/s, ETA 2h46m"},
		{3000, 6000, 200 * time.Second, "3000/6000 rows (50%), 15 rows/s, ETA 3m20s"},
		{0, 6000, 0, "0/6000 rows (0%), 0 rows/s, ETA ?"},
		{6000, 6000, 3 * time.Second, "6000/6000 rows (100%), 2000 rows/s, done"},
	} {
		if got := progress.ETA(c.done, c.total, "rows", c.elapsed); got != c.want {
			t.Errorf("ETA(%d, %d, %v) = %q, want %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
}

func TestEvery(t *testing.T) {
	e := progress.Every{Interval: 5 * time.Second}
	t0 := time.Unix(1000, 0)
	var due []int
	for i, at := range []time.Duration{0, time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second, 11 * time.Second} {
		if e.Due(t0.Add(at), false) {
			due = append(due, i)
		}
	}
	if len(due) != 3 || due[0] != 0 || due[1] != 3 || due[2] != 5 {
		t.Errorf("lines at calls %v, want 0, 3, 5", due)
	}
	if !e.Due(t0.Add(12*time.Second), true) {
		t.Error("the final line is always due")
	}
}
