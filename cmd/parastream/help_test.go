package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func lines(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 }

func TestHelpFitsAScreen(t *testing.T) {
	for _, cmd := range []string{"extract", "featurize"} {
		code, out, errOut := runCLI(t, cmd, "--help")
		if code != 0 || errOut != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, errOut)
		}
		if n := lines(out); n > 60 {
			t.Errorf("%s --help prints %d lines, want at most 60:\n%s", cmd, n, out)
		}
		for _, want := range []string{"input:", "output:", "run:", "example:", "--help-beam"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, out)
			}
		}
		if strings.Contains(out, "environment_type") || strings.Contains(out, "--runner string") {
			t.Errorf("%s --help lists Beam's flags:\n%s", cmd, out)
		}
		code, out, _ = runCLI(t, cmd, "--help-beam")
		if code != 0 || !strings.Contains(out, "--environment_type") {
			t.Errorf("%s --help-beam: exit %d, output lacks --environment_type", cmd, code)
		}
	}
	if _, out, _ := runCLI(t, "featurize", "--help"); !strings.Contains(out, "model:") {
		t.Errorf("featurize --help has no model group:\n%s", out)
	}
}

// The other commands' help puts every flag under a named group (none left
// under "other") and ends with an example.
func TestHelpGrouped(t *testing.T) {
	for _, cmd := range []string{"publish", "consume", "train"} {
		code, out, errOut := runCLI(t, cmd, "--help")
		if code != 0 || errOut != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, errOut)
		}
		for _, want := range []string{"connection:", "--brokers", "example:\n  parastream " + cmd} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, out)
			}
		}
		if strings.Contains(out, "\nother:") || strings.Contains(out, "\nflags:") {
			t.Errorf("%s --help has ungrouped flags:\n%s", cmd, out)
		}
	}
}

func TestBeamFlagsStillAccepted(t *testing.T) {
	// A Beam flag parses; what fails is the missing --corpus.
	code, _, errOut := runCLI(t, "extract", "--runner", "prism", "--environment_type", "LOOPBACK")
	if code != exitUsage || strings.Contains(errOut, "unknown flag") || !strings.Contains(errOut, "--corpus is required") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		code, out, errOut := runCLI(t, flag)
		if code != 0 || !strings.HasPrefix(out, "parastream ") || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", flag, code, out, errOut)
		}
	}
}

// Each mistake prints at most 3 lines on stderr, naming the flag or file
// and the fix, and exits with the documented status.
func TestErrorsAreShort(t *testing.T) {
	stsDir := t.TempDir()
	os.WriteFile(filepath.Join(stsDir, "pairs.tsv"), []byte("a\tb\n"), 0o644)
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"sts directory", []string{"extract", "--corpus", "sts", "--input", stsDir, "--out", out}, exitFailed,
			[]string{"--input " + stsDir, "STS.input.<set>.txt", "--input '" + filepath.Join(stsDir, "*", "STS.input.*.txt") + "'"}},
		{"sts glob", []string{"extract", "--corpus", "sts", "--input", filepath.Join(stsDir, "*"), "--out", out}, exitFailed,
			[]string{"pairs.tsv", "not an STS input file", "STS.input.*.txt"}},
		{"unknown corpus", []string{"extract", "--corpus", "redit", "--input", "x", "--out", out}, exitUsage,
			[]string{`--corpus "redit"`, "reddit, "}},
		{"missing input", []string{"extract", "--corpus", "quora", "--input", filepath.Join(stsDir, "nope", "*.tsv"), "--out", out}, exitFailed,
			[]string{"matches no file", "no directory " + filepath.Join(stsDir, "nope")}},
		{"bad flag", []string{"extract", "--corpus", "quora", "--inptu", "x"}, exitUsage,
			[]string{"unknown flag --inptu", "did you mean --input?"}},
		{"bad flag value", []string{"read", "--show", "many"}, exitUsage,
			[]string{"--show"}},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tc.name, code, tc.code, errOut)
		}
		if n := lines(errOut); n > 3 {
			t.Errorf("%s: %d lines on stderr, want at most 3:\n%s", tc.name, n, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errOut)
			}
		}
	}
}

func TestSTSDirectoryIsExpanded(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := runCLI(t, "extract", "--corpus", "sts", "--input", "../../testdata/sts", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stdout, "kept      3 pairs") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
}

// A failure inside the pipeline prints its cause in a line, and the path
// of the log that holds the plan.
func TestPipelineFailureIsShort(t *testing.T) {
	b, err := os.ReadFile("../../testdata/reddit/comments.jsonl.zst")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "RC_cut.zst")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	code, _, errOut := runCLI(t, "extract", "--corpus", "reddit", "--input", cut, "--out", t.TempDir(), "--quiet")
	if code != exitFailed || lines(errOut) > 3 || !strings.Contains(errOut, cut+": truncated") || !strings.Contains(errOut, "--skip-bad-files") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	log := regexp.MustCompile(`logs: (\S+);`).FindStringSubmatch(errOut)
	if log == nil {
		t.Fatalf("no log path in %q", errOut)
	}
	b, err = os.ReadFile(log[1])
	if err != nil || !strings.Contains(string(b), "Plan[") {
		t.Errorf("log %s: %v, %d bytes without the plan", log[1], err, len(b))
	}
	os.Remove(log[1])
}

func TestReadRejectsNeedsForce(t *testing.T) {
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	os.WriteFile(rejects, []byte("keep me\n"), 0o644)
	in := "../../testdata/reddit/comments.jsonl.zst"
	code, _, errOut := runCLI(t, "read", "--format", "reddit-comments", "--rejects", rejects, in)
	if b, _ := os.ReadFile(rejects); code != exitUsage || string(b) != "keep me\n" || !strings.Contains(errOut, "--force") {
		t.Fatalf("exit %d, stderr %q, file %q", code, errOut, b)
	}
	if code, _, errOut := runCLI(t, "read", "--format", "reddit-comments", "--rejects", rejects, "--force", in); code != 0 {
		t.Fatalf("--force: exit %d, %s", code, errOut)
	}
	if b, _ := os.ReadFile(rejects); strings.Count(string(b), "\n") != 4 {
		t.Errorf("rejects after --force:\n%s", b)
	}
}

func TestAllFilteredRedditWarns(t *testing.T) {
	code, stdout, errOut := runCLI(t, "extract", "--corpus", "reddit", "--input", "../../testdata/reddit/comments.jsonl",
		"--max-chars", "2", "--out", t.TempDir(), "--quiet")
	if code != 0 || !strings.Contains(stdout, "warning: no pairs were kept") || !strings.Contains(stdout, "raise --max-chars") {
		t.Errorf("exit %d, stdout:\n%s\nstderr %s", code, stdout, errOut)
	}
}
