package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
)

// options are benchreport's settings (its flags).
type options struct {
	bench    *regexp.Regexp
	count    int
	out      string
	comments int64
	nmfQuick bool
	// quick marks a smoke run (-quick): the report says so.
	quick bool
	steps steps
	// memJSON is make bench-mem's mem.json.
	memJSON string
}

// steps are the training steps a figure is measured over (go test's
// -benchtime Nx and the PyTorch scripts' --steps).
type steps struct {
	avg, recurrent, vocab int
}

// fullSteps are make bench's: as many as scripts/train_bench.py's
// defaults (30 for avg, 4 for the recurrent encoders); for the vocabulary
// rows 200 on both sides (about 3 s a run at 400,000 words), so that a
// run's figure is an average over enough steps to vary less than 10%
// between runs (20 steps, 0.3 s, spread up to 2x).
func fullSteps() steps { return steps{avg: 30, recurrent: 4, vocab: 200} }

// quickSteps are -quick's.
func quickSteps() steps { return steps{avg: 3, recurrent: 1, vocab: 20} }

// runner runs the suites and gathers the report.
type runner struct {
	opt   options
	start time.Time
	work  string
	raw   io.Writer
	rep   Report
	// torchPy and sklearnPy are the python3 with torch and the one with
	// numpy, scipy and scikit-learn ("" where there is none).
	torchPy, sklearnPy string
	// torchTrain is scripts/train_bench.py's result once run, for
	// torchModels (torchNote says why there is none).
	torchTrain  *TorchTrain
	torchNote   string
	torchModels string
}

// suite is a group of rows and how to measure them.
type suite struct {
	name, about string
	run         func(r *runner) []Row
}

// suites are what `make bench` runs, in order; -bench selects among them
// by name.
func suites() []suite {
	return []suite{
		{"ExtractReddit", "BenchmarkExtractReddit: comments/s per core beside PolyAI's, pipeline/loop", (*runner).extractReddit},
		{"ExtractRSS", "peak RSS of `parastream extract --corpus reddit` on the same comments", (*runner).extractRSS},
		{"NMF", "scripts/nmf_bench.py: featurize's NMF beside scikit-learn", (*runner).nmf},
		{"StreamVsKcat", "BenchmarkStreamVsKcat: publish, consume-wire, consume beside kcat", (*runner).stream},
		{"VocabScaling", "BenchmarkVocabScaling at 20,000 and 400,000 words beside scripts/vocab_bench.py", (*runner).vocab},
		{"RunFeed", "BenchmarkRunFeed: examples/s end to end from the embedded broker", (*runner).runFeed},
		// Last of the measured: PyTorch's recurrent encoders take the
		// longest, and on a loaded machine very long.
		{"TrainStep", "BenchmarkTrainStep avg, lstmavg, gran beside scripts/train_bench.py (PyTorch CPU)", (*runner).trainStep},
		{"GPU", "scripts/gpu_bench.py: BenchmarkGPUTrainStep beside PyTorch CUDA, on a machine with an NVIDIA GPU", (*runner).gpu},
		{"BenchMem", "the last make bench-mem's table (out/bench/mem.json), read, not run", (*runner).benchMem},
	}
}

// logf prints a progress line on stderr.
func (r *runner) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s benchreport: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// run runs the selected suites and writes the report; failed is set when
// a suite failed (the report is written all the same).
func (r *runner) run() (failed bool, err error) {
	var chosen []suite
	for _, s := range suites() {
		if r.opt.bench.MatchString(s.name) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		return false, fmt.Errorf("-bench %q matches no suite: go run ./tools/benchreport -list lists them", r.opt.bench)
	}
	commit := gitCommit()
	date := r.start.UTC().Format("2006-01-02")
	if err := os.MkdirAll(r.opt.out, 0o755); err != nil {
		return false, fmt.Errorf("creating the results directory: %w", err)
	}
	base := filepath.Join(r.opt.out, date+"-"+commit)
	rawFile, err := os.Create(base + ".txt")
	if err != nil {
		return false, fmt.Errorf("creating the benchmark output file: %w", err)
	}
	defer rawFile.Close()
	r.raw = rawFile
	if r.work, err = os.MkdirTemp("", "benchreport"); err != nil {
		return false, fmt.Errorf("creating a work directory: %w", err)
	}
	defer os.RemoveAll(r.work)

	r.rep = Report{Date: r.start.UTC().Format("2006-01-02 15:04 UTC"), Commit: commit, Bench: r.opt.bench.String(),
		Count: r.opt.count, RawGo: base + ".txt", Machine: machine(), Versions: map[string]string{}, Peers: map[string]json.RawMessage{}}
	r.versions()
	if r.opt.quick {
		r.rep.Notes = append(r.rep.Notes, "A -quick run (a tenth of the steps, small inputs): it checks the machinery; its figures are not for reading.")
	}
	if r.rep.Machine.Cores > 0 {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("PyTorch runs with as many threads as cores (%d), Go with GOMAXPROCS %d.", r.rep.Machine.Cores, runtime.GOMAXPROCS(0)))
	}
	for i, s := range chosen {
		t := time.Now()
		r.logf("== %s: %s", s.name, s.about)
		for _, row := range s.run(r) {
			r.rep.Rows = append(r.rep.Rows, withSpread(row))
		}
		r.logf("== %s: %.0f s", s.name, time.Since(t).Seconds())
		// The report so far, so that a run stopped part way leaves the
		// suites it finished.
		r.rep.Machine.LoadEnd = loadAverage()
		r.rep.Seconds = time.Since(r.start).Seconds()
		r.rep.Partial = i < len(chosen)-1
		if err := r.write(base); err != nil {
			return false, err
		}
	}
	if err := WriteMarkdown(os.Stdout, &r.rep); err != nil {
		return false, err
	}
	r.logf("written: %s.md, %s.json, %s.txt (%.0f s)", base, base, base, r.rep.Seconds)
	return len(r.rep.Failures) > 0, nil
}

// write writes the report's .json and .md.
func (r *runner) write(base string) error {
	if err := writeFile(base+".json", func(w io.Writer) error { return WriteJSON(w, &r.rep) }); err != nil {
		return err
	}
	return writeFile(base+".md", func(w io.Writer) error { return WriteMarkdown(w, &r.rep) })
}

// writeFile writes path with write, to a temporary name first and then
// renamed, so that a reader never sees half a report.
func writeFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("creating the report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming the report into place: %w", err)
	}
	return nil
}

// fail records a suite's failure and returns the message for its rows.
func (r *runner) fail(suiteName, msg string) string {
	r.rep.Failures = append(r.rep.Failures, suiteName+": "+msg)
	r.logf("%s failed: %s", suiteName, msg)
	return msg
}

// goBench runs one go test -bench, its output kept in the raw file, and
// returns its results ("" or what went wrong).
func (r *runner) goBench(suiteName, pkg, pattern, benchtime string, env ...string) ([]Benchmark, string) {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-count", strconv.Itoa(r.opt.count),
		"-benchmem", "-timeout", "60m", pkg}
	r.logf("go %s %s", strings.Join(args, " "), strings.Join(env, " "))
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	cmd.Stderr = io.MultiWriter(&errOut, os.Stderr)
	runErr := cmd.Run()
	text := RepairBench(out.String())
	if _, err := io.WriteString(r.raw, text); err != nil {
		return nil, r.fail(suiteName, "writing the benchmark output: "+err.Error())
	}
	bs, err := ParseBench(strings.NewReader(text))
	switch {
	case runErr != nil:
		return bs, r.fail(suiteName, fmt.Sprintf("go test %s -bench '%s': %v: %s", pkg, pattern, runErr, lastLines(out.String()+errOut.String(), 4)))
	case err != nil:
		return bs, r.fail(suiteName, err.Error())
	}
	return bs, ""
}

// lastLines are the last n non-empty lines of s, joined by " / ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// pyJSON runs a peer script with py and returns the JSON object it printed
// last on stdout (its other output goes to stderr).
func (r *runner) pyJSON(py, script string, args ...string) (json.RawMessage, error) {
	r.logf("%s %s %s", py, script, strings.Join(args, " "))
	cmd := exec.Command(py, append([]string{script}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(&errOut, os.Stderr)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", script, err, lastLines(errOut.String(), 3))
	}
	var last string
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "{") {
			last = l
		}
	}
	if last == "" || !json.Valid([]byte(last)) {
		return nil, fmt.Errorf("%s printed no JSON object on stdout: %s", script, lastLines(out.String(), 3))
	}
	r.rep.Peers[filepath.Base(script)] = json.RawMessage(last)
	return json.RawMessage(last), nil
}

func (r *runner) extractReddit() []Row {
	bs, errMsg := r.goBench("ExtractReddit", "./pipelines/", "^BenchmarkExtractReddit$", "1x",
		fmt.Sprintf("PARASTREAM_BENCH_COMMENTS=%d", r.opt.comments))
	return extractRows(bs, r.opt.comments, errMsg)
}

func (r *runner) extractRSS() []Row {
	rss, jsonBytes, err := r.measureExtractRSS()
	msg := ""
	if err != nil {
		msg = r.fail("ExtractRSS", err.Error())
	}
	return rssRows(rss, r.opt.comments, jsonBytes, msg)
}

// measureExtractRSS builds parastream, generates the comments and
// extracts them count times, each run's peak RSS (the kernel's ru_maxrss
// of the process, MiB) returned with the input's uncompressed size.
func (r *runner) measureExtractRSS() ([]float64, int64, error) {
	bin := filepath.Join(r.work, "parastream")
	r.logf("building %s", bin)
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/parastream").CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("go build ./cmd/parastream: %v: %s", err, lastLines(string(out), 3))
	}
	input := filepath.Join(r.work, "RC_bench.zst")
	if out, err := exec.Command(bin, "gen", "reddit", "--rows", strconv.FormatInt(r.opt.comments, 10), "--seed", "11", "--out", input).CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("parastream gen reddit: %v: %s", err, lastLines(string(out), 3))
	}
	jsonBytes, err := zstdSize(input)
	if err != nil {
		return nil, 0, err
	}
	var rss []float64
	for i := range r.opt.count {
		out := filepath.Join(r.work, fmt.Sprintf("extract-%d", i))
		cmd := exec.Command(bin, "extract", "--corpus", "reddit", "--input", input, "--out", out, "--quiet")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return rss, jsonBytes, fmt.Errorf("parastream extract: %v: %s", err, lastLines(errOut.String(), 3))
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return rss, jsonBytes, errors.New("no rusage for parastream extract on this system (Linux gives it)")
		}
		mib := float64(ru.Maxrss) / 1024 // Linux: KiB
		rss = append(rss, mib)
		r.logf("extract run %d: peak RSS %.0f MiB, %.1f s", i+1, mib, time.Since(t).Seconds())
		os.RemoveAll(out)
	}
	return rss, jsonBytes, nil
}

// zstdSize is the decompressed size of a zstd file.
func zstdSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	defer d.Close()
	n, err := io.Copy(io.Discard, d)
	if err != nil {
		return 0, fmt.Errorf("decompressing %s: %w", path, err)
	}
	return n, nil
}

func (r *runner) nmf() []Row {
	if r.sklearnPy == "" {
		return nmfRows(nil, noSklearn, "")
	}
	args := []string{"--json", "--repeat", strconv.Itoa(r.opt.count)}
	if r.opt.nmfQuick {
		args = append(args, "--quick")
	}
	raw, err := r.pyJSON(r.sklearnPy, "scripts/nmf_bench.py", args...)
	if err != nil {
		return nmfRows(nil, "", r.fail("NMF", err.Error()))
	}
	var res NMFResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nmfRows(nil, "", r.fail("NMF", "scripts/nmf_bench.py's JSON: "+err.Error()))
	}
	return nmfRows(&res, "", "")
}

func (r *runner) stream() []Row {
	if _, err := exec.LookPath("kcat"); err != nil {
		r.logf("kcat is not in PATH: BenchmarkStreamVsKcat would skip; its rows say so")
		return streamRows(nil, noKcat, "")
	}
	bs, errMsg := r.goBench("StreamVsKcat", "./stream/", "^BenchmarkStreamVsKcat$", "1x")
	return streamRows(bs, "", errMsg)
}

// torchTrainRun runs scripts/train_bench.py --torch-only for models
// unless the last run was of those models.
func (r *runner) torchTrainRun(models string) {
	if r.torchModels == models {
		return
	}
	r.torchModels, r.torchTrain, r.torchNote = models, nil, ""
	if r.torchPy == "" {
		r.torchNote = noTorch
		return
	}
	args := []string{"--torch-only", "--json", "--models", models, "--repeat", strconv.Itoa(r.opt.count)}
	if r.opt.quick {
		// One --steps for every model: the recurrent encoders' (quick).
		args = append(args, "--steps", strconv.Itoa(r.opt.steps.recurrent))
	}
	raw, err := r.pyJSON(r.torchPy, "scripts/train_bench.py", args...)
	if err != nil {
		r.torchNote = "failed: " + r.fail("PyTorch", err.Error())
		return
	}
	var tt TorchTrain
	if err := json.Unmarshal(raw, &tt); err != nil {
		r.torchNote = "failed: " + r.fail("PyTorch", "scripts/train_bench.py's JSON: "+err.Error())
		return
	}
	r.torchTrain = &tt
}

func (r *runner) trainStep() []Row {
	var bs []Benchmark
	var msgs []string
	st := r.opt.steps
	for _, p := range []struct {
		pattern string
		steps   int
	}{{"^BenchmarkTrainStep/^avg$", st.avg}, {"^BenchmarkTrainStep/^(lstmavg|gran)$", st.recurrent}} {
		b, msg := r.goBench("TrainStep", "./trainstep/", p.pattern, fmt.Sprintf("%dx", p.steps))
		bs = append(bs, b...)
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	r.torchTrainRun(trainModels())
	return trainRows(bs, r.torchTrain, r.torchNote, strings.Join(msgs, "; "))
}

func (r *runner) vocab() []Row {
	sizes := []int{20_000, 400_000}
	vsteps := strconv.Itoa(r.opt.steps.vocab)
	bs, errMsg := r.goBench("VocabScaling", "./trainstep/", "^BenchmarkVocabScaling/^vocab=(20000|400000)$", vsteps+"x")
	if r.torchPy == "" {
		return vocabRows(bs, sizes, nil, noTorch, errMsg)
	}
	raw, err := r.pyJSON(r.torchPy, "scripts/vocab_bench.py", "--torch-only", "--json", "--sizes", "20000,400000",
		"--steps", vsteps, "--repeat", strconv.Itoa(r.opt.count))
	if err != nil {
		return vocabRows(bs, sizes, nil, "failed: "+r.fail("VocabScaling", err.Error()), errMsg)
	}
	var tv TorchVocab
	if err := json.Unmarshal(raw, &tv); err != nil {
		return vocabRows(bs, sizes, nil, "failed: "+r.fail("VocabScaling", "scripts/vocab_bench.py's JSON: "+err.Error()), errMsg)
	}
	return vocabRows(bs, sizes, &tv, "", errMsg)
}

func (r *runner) runFeed() []Row {
	const variant = "ahead-async"
	bs, errMsg := r.goBench("RunFeed", "./trainstep/", "^BenchmarkRunFeed/^"+variant+"$", "1x")
	r.torchTrainRun("avg")
	return feedRows(bs, variant, r.torchTrain, r.torchNote, errMsg)
}

// versions fills the report's versions and finds the peers' pythons.
func (r *runner) versions() {
	v := r.rep.Versions
	v["commit"] = r.rep.Commit
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		v["go"] = strings.TrimSpace(string(out))
	}
	if path, err := exec.LookPath("kcat"); err == nil {
		out, _ := exec.Command(path, "-V").CombinedOutput()
		kv, lv := kcatVersions(string(out))
		v["kcat"], v["librdkafka"] = kv, lv
	} else {
		v["kcat"] = noKcat
	}
	if path, err := exec.LookPath("b3sum"); err == nil {
		out, _ := exec.Command(path, "--version").Output()
		v["b3sum"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "b3sum"))
	} else {
		v["b3sum"] = noB3sum
	}
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if r.sklearnPy == "" {
			if out, err := exec.Command(py, "-c", "import numpy, scipy, sklearn; print(sklearn.__version__, scipy.__version__, numpy.__version__)").Output(); err == nil {
				if f := strings.Fields(string(out)); len(f) == 3 {
					r.sklearnPy = py
					v["sklearn"], v["scipy"], v["numpy"] = f[0], f[1], f[2]
				}
			}
		}
	}
	// Debian's torch, as scripts/train_bench.py says.
	if out, err := exec.Command("/usr/bin/python3", "-c", "import torch; print(torch.__version__)").Output(); err == nil {
		r.torchPy = "/usr/bin/python3"
		v["torch"] = strings.TrimSpace(string(out))
	} else {
		v["torch"] = noTorch
	}
	if r.sklearnPy == "" {
		v["sklearn"] = noSklearn
	}
	if out, err := exec.Command("python3", "--version").CombinedOutput(); err == nil {
		v["python"] = strings.TrimSpace(strings.TrimPrefix(string(out), "Python "))
	}
}

// kcatVersions are kcat's and librdkafka's versions from `kcat -V`.
func kcatVersions(out string) (kcat, librdkafka string) {
	if m := regexp.MustCompile(`Version (\S+)`).FindStringSubmatch(out); m != nil {
		kcat = m[1]
	}
	if m := regexp.MustCompile(`librdkafka (\S+)`).FindStringSubmatch(out); m != nil {
		librdkafka = m[1]
	}
	return kcat, librdkafka
}

// gitCommit is HEAD's short hash, "-dirty" appended when tracked files
// have changes ("unknown" outside a git checkout).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "-dirty"
	}
	return c
}

// machine describes this machine from /proc.
func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), CPU: "unknown", LoadStart: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kib, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemoryGiB = int((kib + 1<<19) >> 20)
			}
		}
	}
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo's text.
func cpuModel(cpuinfo string) string {
	for _, l := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAverage is /proc/loadavg's three load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func (r *runner) benchMem() []Row {
	mb, err := readMemBench(r.opt.memJSON)
	if err != nil {
		r.fail("BenchMem", err.Error())
		return nil
	}
	if mb == nil {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("No %s: run make bench-mem (about 30 minutes) for the peak RSS of every long-running command beside PyTorch's.", r.opt.memJSON))
		return nil
	}
	rows, note := memRows(mb, r.opt.memJSON)
	r.rep.Notes = append(r.rep.Notes, note)
	return rows
}
