package shards_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/parastream/parastream/shards"
)

// faultRun says where the fault tests run a commit: setup gives, for the
// k-th operation, an output holding version 1 and its work directory;
// after checks what a failed or killed commit of version 2 left there,
// and says whether the new version stood.
type faultRun struct {
	setup func(k int) (root, work string)
	after func(root, work, what string) bool
}

// failEach fails each of a commit's operations in turn: before the switch
// the commit fails and the old version stays; after it the new one
// stands.
func (r faultRun) failEach(t *testing.T, ops []string) {
	t.Helper()
	switched := false
	for k, op := range ops {
		root, work := r.setup(k)
		n := 0
		out := open(t, root, shards.OutputOptions{Failpoint: func(string) error {
			if n++; n == k+1 {
				return errInjected
			}
			return nil
		}})
		err := commitVersion(t, out, work, 2)
		out.Close()
		isNew := r.after(root, work, fmt.Sprintf("failing %q (operation %d)", op, k))
		switch {
		case isNew && err != nil:
			t.Errorf("failing %q: the new version stands, yet the commit failed: %v", op, err)
		case !isNew && !errors.Is(err, errInjected):
			t.Errorf("failing %q: the old version stays, and the commit returned %v", op, err)
		case !isNew && switched:
			t.Errorf("failing %q, after a failure that left the new version, left the old one", op)
		}
		switched = switched || isNew
	}
	if !switched {
		t.Error("no failure left the new version: the switch is not among the operations")
	}
}

// killEach kills (SIGKILL) a commit at each of its operations, in a
// helper process (TestCommitKilledHelper): each kill leaves the old
// version or the new one, and both occur.
func (r faultRun) killEach(t *testing.T, ops []string) {
	t.Helper()
	olds, news := 0, 0
	for k, op := range ops {
		root, work := r.setup(k)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCommitKilledHelper$")
		cmd.Env = append(os.Environ(), "SHARDS_KILL_ROOT="+root, "SHARDS_KILL_WORK="+work, "SHARDS_KILL_AT="+strconv.Itoa(k))
		outb, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("killing at %q: the helper ended with %v:\n%s", op, err, outb)
		}
		if r.after(root, work, fmt.Sprintf("killed at %q", op)) {
			news++
		} else {
			olds++
		}
	}
	t.Logf("%d kills: %d left the old version, %d the new", len(ops), olds, news)
	if olds == 0 || news == 0 {
		t.Errorf("kills left %d old and %d new versions: both should occur", olds, news)
	}
}
