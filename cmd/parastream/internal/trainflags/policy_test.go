package trainflags_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
	"github.com/parastream/parastream/trainstep"
)

// TestKeptFlags: run.json keeps every flag but --resume, --checkpoint-dir
// and passwords, with file names made absolute.
func TestKeptFlags(t *testing.T) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.String("resume", "", "")
	fs.String("checkpoint-dir", "", "")
	fs.String("sasl-password", "", "")
	fs.String("tls-ca", "", "")
	fs.Int("epochs", 1, "")
	if err := fs.Parse([]string{"--tls-ca", "ca.pem", "--sasl-password", "secret"}); err != nil {
		t.Fatal(err)
	}
	got := trainflags.KeptFlags(fs)
	abs, _ := filepath.Abs("ca.pem")
	if len(got) != 2 || got["epochs"] != "1" || got["tls-ca"] != abs {
		t.Errorf("kept %v", got)
	}
}

// TestEveryTrainFlagHasAPolicy: each flag of the set train builds has a
// resume policy, written or derived, so that a new flag cannot default to
// "override" silently; and every model flag is refused on resume.
func TestEveryTrainFlagHasAPolicy(t *testing.T) {
	tf := trainflags.New(io.Discard, io.Discard)
	n := 0
	tf.FlagSet().VisitAll(func(f *flag.Flag) {
		n++
		if _, ok := trainflags.Policy(f.Name); !ok {
			t.Errorf("--%s has no resume policy: add it to policies (policy.go), or to the model's flags if it changes the model", f.Name)
		}
	})
	if n < 60 {
		t.Fatalf("train declares %d flags: the set is not train's", n)
	}
	model := flag.NewFlagSet("model", flag.ContinueOnError)
	trainflags.DeclareModel(model, new(trainstep.Config))
	model.VisitAll(func(f *flag.Flag) {
		if p, _ := trainflags.Policy(f.Name); p != trainflags.Refused {
			t.Errorf("model flag --%s has policy %v: a resume must refuse a flag that changes the model", f.Name, p)
		}
	})
}

// writeRunJSON writes dir/run.json keeping flags, as a run does.
func writeRunJSON(t *testing.T, flags map[string]string) string {
	dir := t.TempDir()
	data, err := json.Marshal(map[string]any{"run": "r", "dataset": "d", "split": "train", "flags": flags})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, trainstep.FileRun), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRestoreRefusesModelFlags: a resume refuses --recurrent-init and
// --embed-init changed (they change the model), overrides --epochs with a
// line, and restores the flags not given.
func TestRestoreRefusesModelFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		refused string
	}{
		{[]string{"--recurrent-init", "glorot"}, "--recurrent-init glorot"},
		{[]string{"--embed-init", "normal:0.1"}, "--embed-init normal:0.1"},
		{[]string{"--epochs", "4"}, ""},
	} {
		tf := trainflags.New(io.Discard, io.Discard)
		kept := trainflags.KeptFlags(tf.FlagSet())
		kept["recurrent-init"], kept["model"], kept["dim"] = "avg", "lstmavg", "16"
		dir := writeRunJSON(t, kept)
		fs := tf.FlagSet()
		if err := fs.Parse(append([]string{"--resume", dir}, c.args...)); err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		err := trainflags.RestoreFlags(fs, dir, &w)
		var fe *trainflags.FlagsError
		switch {
		case c.refused != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%v: got %v, want %s refused", c.args, err, c.refused)
		case c.refused == "" && (err != nil || !strings.Contains(w.String(), "--epochs 4 overrides the run's 1")):
			t.Errorf("%v: got %v, %q", c.args, err, w.String())
		case c.refused == "" && (fs.Lookup("model").Value.String() != "lstmavg" || fs.Lookup("dim").Value.String() != "16"):
			t.Errorf("%v: the run's model flags not restored: --model %s --dim %s", c.args, fs.Lookup("model").Value, fs.Lookup("dim").Value)
		}
	}
}
