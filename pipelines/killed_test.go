package pipelines_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/shards/shardstest"
)

// The acceptance figure of issue 16 is 50 kills of each command:
//
//	go test ./pipelines -run TestKilledRuns -kills 50 -timeout 30m
//
// By default the test kills each command a few times, to keep `make test`
// short.
var kills = flag.Int("kills", 4, "SIGKILLs of each of extract and featurize in TestKilledRuns (the acceptance run: 50)")

// killedRun is one command of TestKilledRuns: it runs version v (1 or 2)
// of its output, in this process or in a helper process.
type killedRun struct {
	name string
	run  func(ctx context.Context, out string, v int, opts pipelines.RunOptions) error
}

// Real extract and featurize runs over the Quora sample, SIGKILLed at
// random times and at random file operations of their commits: after each
// kill the output verifies against its manifest and is, byte for byte, the
// version before the run or the one it was writing; the following run
// succeeds and leaves no staging or work directory.
func TestKilledRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs extract and featurize many times")
	}
	quora := sharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	extracted := filepath.Join(t.TempDir(), "extracted")
	for _, r := range killedRuns(quora, extracted) {
		t.Run(r.name, func(t *testing.T) {
			if r.name == "featurize" {
				if err := killedRuns(quora, extracted)[0].run(context.Background(), extracted, 1, pipelines.RunOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			testKilled(t, r, quora, extracted, localOutputs())
		})
	}
}

func killedRuns(quora, extracted string) []killedRun {
	return []killedRun{
		{"extract", func(ctx context.Context, out string, v int, opts pipelines.RunOptions) error {
			c := cfg("quora", quora, "")
			c.Out, c.Seed, c.Command = out, uint64(v), []string{"parastream", "extract", "killed-test"}
			_, err := pipelines.RunExtract(ctx, c, opts)
			return err
		}},
		{"featurize", func(ctx context.Context, out string, v int, opts pipelines.RunOptions) error {
			c := smallFeaturize(extracted, out)
			c.Topics, c.Sample, c.MaxIter, c.Seed = 3, 500, 20, uint64(v)
			_, err := pipelines.RunFeaturize(ctx, c, opts)
			return err
		}},
	}
}

// outputs says where testKilled writes its outputs: location gives a new
// one, view what a reader of it sees, tree every file it holds.
type outputs struct {
	location func(t *testing.T, name string) string
	view     func(t testing.TB, loc string) map[string]string
	tree     func(t testing.TB, loc string) map[string]string
}

// localOutputs are directories of the test.
func localOutputs() outputs {
	return outputs{location: func(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) },
		view: shardstest.ReaderView, tree: outputTree}
}

func testKilled(t *testing.T, r killedRun, quora, extracted string, where outputs) {
	ctx := context.Background()
	// The two versions, and the operations of a commit of the second over
	// the first.
	ref := where.location(t, "ref")
	var ops []string
	if err := r.run(ctx, ref, 1, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	trees := map[int]map[string]string{1: where.tree(t, ref)}
	start := time.Now()
	if err := r.run(ctx, ref, 2, pipelines.RunOptions{Failpoint: func(op string) error { ops = append(ops, op); return nil }}); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	trees[2] = where.tree(t, ref)
	if maps.Equal(trees[1], trees[2]) {
		t.Fatal("the two versions are the same")
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 16))
	out := where.location(t, "out")
	if err := r.run(ctx, out, 1, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	state := 1
	var killed, atOp, completed, stayed, switched int
	for i := range *kills {
		target := 3 - state
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunHelper$")
		cmd.Env = append(os.Environ(), "PIPELINES_KILL_CMD="+r.name, "PIPELINES_KILL_OUT="+out, "PIPELINES_KILL_QUORA="+quora,
			"PIPELINES_KILL_IN="+extracted, "PIPELINES_KILL_VERSION="+strconv.Itoa(target), "PIPELINES_KILL_AT=-1")
		var what string
		if i%2 == 1 {
			k := rng.IntN(len(ops))
			cmd.Env[len(cmd.Env)-1] = "PIPELINES_KILL_AT=" + strconv.Itoa(k)
			what = fmt.Sprintf("kill %d, at %q", i, ops[k])
			atOp++
		}
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if what == "" {
			d := time.Duration(rng.Int64N(int64(full) * 6 / 5))
			what = fmt.Sprintf("kill %d, after %v", i, d.Round(time.Millisecond))
			time.Sleep(d)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		switch {
		case err == nil:
			completed++
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
			killed++
		default:
			t.Fatalf("%s: the run failed: %v\n%s", what, err, logs.String())
		}
		got := where.view(t, out)
		switch {
		case maps.Equal(got, shardstest.ViewOf(trees[state])):
			stayed++
		case maps.Equal(got, shardstest.ViewOf(trees[target])):
			switched++
			state = target
		default:
			t.Fatalf("%s: the output is neither version %d nor version %d", what, state, target)
		}
		// The following run.
		if err := r.run(ctx, out, target, pipelines.RunOptions{}); err != nil {
			t.Fatalf("%s: the following run: %v", what, err)
		}
		state = target
		if got := where.tree(t, out); !maps.Equal(got, trees[target]) {
			t.Fatalf("%s: after the following run the output holds %v, want %v", what, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(trees[target])))
		}
	}
	t.Logf("%s: %d runs SIGKILLed (%d at a random commit operation of %d, the rest at a random time up to %v), %d completed first; "+
		"%d left the version before, %d the new one; every following run succeeded and left nothing behind",
		r.name, killed, atOp, len(ops), full*6/5, completed, stayed, switched)
	if killed == 0 {
		t.Error("no run was killed")
	}
}

// TestKilledRunHelper runs one command for TestKilledRuns, killing itself
// at commit operation PIPELINES_KILL_AT when that is not -1.
func TestKilledRunHelper(t *testing.T) {
	name := os.Getenv("PIPELINES_KILL_CMD")
	if name == "" {
		t.Skip("run by TestKilledRuns")
	}
	at, _ := strconv.Atoi(os.Getenv("PIPELINES_KILL_AT"))
	v, _ := strconv.Atoi(os.Getenv("PIPELINES_KILL_VERSION"))
	n := 0
	opts := pipelines.RunOptions{Failpoint: func(string) error {
		if n++; n == at+1 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return nil
	}}
	for _, r := range killedRuns(os.Getenv("PIPELINES_KILL_QUORA"), os.Getenv("PIPELINES_KILL_IN")) {
		if r.name == name {
			if err := r.run(context.Background(), os.Getenv("PIPELINES_KILL_OUT"), v, opts); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// outputTree reads every file under root but the lock file; a staging or
// work directory left there fails the test.
func outputTree(t testing.TB, root string) map[string]string {
	t.Helper()
	files := testenv.Tree(t, root)
	delete(files, shards.LockName)
	for p := range files {
		if strings.HasPrefix(p, shards.StagePrefix) || strings.HasPrefix(p, shards.WorkPrefix) {
			t.Fatalf("%s left behind", p)
		}
	}
	return files
}
