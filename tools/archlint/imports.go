package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// floor is one row of the import table: a package of the module, by its
// directory from the module root, and the packages of the module it may
// import, each with its reason where the row's place in the table does not
// say it already.
type floor struct {
	pkg     string
	imports map[string]string
}

// anyBelow, as a key of a row's imports, lets the package import every
// package of a lower row: the composition root.
const anyBelow = "*"

// importTable is the rule "imports run one way", written down: every
// package of the module, bottom floor first, with the packages of the module
// it may import (its non-test files; tests may import what they need). A
// row may name only packages of rows above it in this list, so the table
// cannot hold an upward edge or a cycle, and `go list -deps` of a package
// shows only packages below it. A package that is not in the table fails
// the check: place a new package on its floor. A row whose directory does
// not exist (yet) is allowed.
func importTable() []floor {
	return []floor{
		// Floor 0: the helpers every layer uses. They import nothing of the
		// module, so that any package may use them.
		{pkg: "internal/atomicfile"},
		{pkg: "internal/sysmem"},
		{pkg: "internal/runlog"},
		{pkg: "internal/beamfn"},
		{pkg: "internal/testenv"},
		{pkg: "internal/progress"}, // done/total, rate and ETA of the progress lines
		{pkg: "featurize/lexicon"}, // the vocabulary file and token ids: read by stream, trainstep and evalsink without featurize or Beam
		{pkg: "trainstep/cpu/cblas"},

		// Floor 1: the raw formats, and the shard contract they fill.
		{pkg: "corpora", imports: edges("internal/atomicfile")},
		{pkg: "corpora/synth", imports: map[string]string{
			"corpora":             "writes each format's files as its reader reads them",
			"internal/atomicfile": "",
		}},
		{pkg: "shards", imports: map[string]string{
			"corpora":             "a row is an Example plus the stages' fields",
			"internal/atomicfile": "",
		}},
		{pkg: "shards/shardstest", imports: edges("shards")},

		// Floor 2: extraction (Beam) and featurizing, on shards.
		{pkg: "transforms/text", imports: map[string]string{
			"corpora": "the text functions work on Examples",
		}},
		{pkg: "transforms/internal/spill", imports: map[string]string{
			"shards": "a spill file holds shard rows",
		}},
		{pkg: "transforms", imports: map[string]string{
			"corpora":                   "reads the raw formats",
			"shards":                    "the stages produce shard rows and write the shards",
			"transforms/text":           "",
			"transforms/internal/spill": "the bucket stages' spill files",
			"internal/atomicfile":       "",
			"internal/beamfn":           "",
		}},
		{pkg: "featurize", imports: map[string]string{
			"featurize/lexicon":   "",
			"shards":              "reads shards and writes featurized ones",
			"transforms/text":     "tokenises as extraction did",
			"internal/atomicfile": "",
			"internal/beamfn":     "",
		}},
		{pkg: "pipelines", imports: map[string]string{
			"corpora":         "the composition root of the Beam pipelines",
			"transforms":      "",
			"transforms/text": "",
			"shards":          "",
			"featurize":       "",
			"internal/beamfn": "reads the committed counters",
		}},

		// Floor 3: Kafka, then training on what it carries.
		{pkg: "stream", imports: map[string]string{
			"shards":            "a message is a batch of shard rows",
			"featurize/lexicon": "the vocabulary on the artifacts topic",
		}},
		{pkg: "trainstep/compute", imports: map[string]string{
			"featurize/lexicon": "the model's vocabulary",
			"internal/sysmem":   "the optimiser's moments on huge pages",
		}},
		{pkg: "trainstep/cpu", imports: map[string]string{
			"trainstep/compute":   "",
			"trainstep/cpu/cblas": "",
			"internal/sysmem":     "the parameter tables on huge pages",
		}},
		{pkg: "trainstep/cuda", imports: edges("trainstep/compute")},
		{pkg: "trainstep/device", imports: map[string]string{
			"trainstep/compute":   "",
			"trainstep/cpu":       "opens the backend a run computes on",
			"trainstep/cpu/cblas": "",
			"trainstep/cuda":      "",
			"internal/sysmem":     "the CPU's memory budget",
		}},
		{pkg: "trainstep", imports: map[string]string{
			"stream":              "the trainer consumes the topics",
			"shards":              "the manifest and rows of a dataset",
			"featurize/lexicon":   "a checkpoint carries its lexicon",
			"trainstep/compute":   "",
			"trainstep/cpu":       "",
			"internal/atomicfile": "",
			"internal/progress":   "the progress line's ETA",
		}},
		{pkg: "trainstep/internal/trainbench", imports: edges("trainstep", "trainstep/compute", "trainstep/cpu", "trainstep/cpu/cblas", "internal/testenv", "internal/sysmem")},

		// Floor 4: evaluation, on checkpoints.
		{pkg: "evalsink/metric", imports: edges("featurize/lexicon", "internal/atomicfile")},
		{pkg: "evalsink/plot", imports: edges("featurize/lexicon", "internal/atomicfile")},
		{pkg: "evalsink", imports: map[string]string{
			"evalsink/metric":     "",
			"evalsink/plot":       "",
			"trainstep":           "loads a checkpoint's model",
			"trainstep/compute":   "",
			"stream":              "watches the checkpoints topic",
			"shards":              "",
			"corpora":             "reads the evaluation sets",
			"transforms/text":     "tokenises as training did",
			"featurize/lexicon":   "",
			"internal/atomicfile": "",
		}},
		{pkg: "evalsink/adapt", imports: map[string]string{
			"evalsink":            "adapts a model to an evaluation task",
			"evalsink/metric":     "",
			"trainstep":           "",
			"trainstep/compute":   "",
			"featurize/lexicon":   "",
			"internal/atomicfile": "",
		}},
		// The fixtures that the tests of evalsink and its subpackages share
		// (imported by _test files only): sets extracted, a model trained.
		{pkg: "evalsink/internal/evaltest", imports: map[string]string{
			"evalsink":         "loads the sets the tests score",
			"pipelines":        "extracts the shared evaluation sets",
			"trainstep":        "trains the checkpoint the tests embed with",
			"internal/testenv": "",
		}},

		// Floor 5: the command line. Only cmd/parastream imports these.
		{pkg: "cmd/parastream/internal/outdir", imports: map[string]string{
			"shards": "recognises a parastream output directory by its files",
		}},
		{pkg: "cmd/parastream/internal/cli", imports: map[string]string{
			"stream": "the Kafka client flags build a stream.ClientConfig",
		}},
		{pkg: "cmd/parastream/internal/trainflags", imports: edges("cmd/parastream/internal/cli", "stream", "trainstep", "trainstep/compute", "trainstep/cpu", "trainstep/cpu/cblas", "trainstep/cuda", "trainstep/device")},
		{pkg: "cmd/parastream/internal/report", imports: map[string]string{
			"corpora":           "prints the summaries of each command",
			"corpora/synth":     "",
			"shards":            "",
			"featurize":         "",
			"pipelines":         "",
			"evalsink":          "",
			"stream":            "publish's progress lines",
			"internal/progress": "",
		}},
		{pkg: "cmd/parastream/internal/demo", imports: map[string]string{
			"cmd/parastream/internal/report": "runs every stage, as the commands do",
			"corpora":                        "",
			"transforms":                     "",
			"shards":                         "",
			"pipelines":                      "",
			"stream":                         "",
			"trainstep":                      "",
			"trainstep/compute":              "",
			"evalsink":                       "",
		}},
		{pkg: "cmd/parastream", imports: map[string]string{
			anyBelow: "the one command: flags, configs, one library call per command",
		}},

		// Development tools: commands of their own, which nothing imports.
		{pkg: "tools/archlint"},
		{pkg: "tools/benchreport"},
		{pkg: "tools/graphmem", imports: edges("trainstep/compute", "trainstep/cpu")},
		{pkg: "tools/nmfbench", imports: edges("corpora", "featurize", "transforms/text")},
		{pkg: "scripts/gpu_bundle"},
	}
}

// edges is a row's imports where no edge needs a reason of its own.
func edges(pkgs ...string) map[string]string {
	m := make(map[string]string, len(pkgs))
	for _, p := range pkgs {
		m[p] = ""
	}
	return m
}

// importRules checks a file's imports of the module against the table.
type importRules struct {
	module string         // the module path: imports under it are checked
	floor  map[string]int // a package's row in table
	table  []floor
}

// newImportRules indexes table, refusing a table that names a package twice
// or lets a row import a package that is not on a row above it.
func newImportRules(module string, table []floor) (*importRules, error) {
	r := &importRules{module: module, floor: make(map[string]int, len(table)), table: table}
	for i, row := range table {
		if _, dup := r.floor[row.pkg]; dup {
			return nil, fmt.Errorf("import table: %s has two rows", row.pkg)
		}
		for imp := range row.imports {
			if j, ok := r.floor[imp]; imp != anyBelow && (!ok || j >= i) {
				return nil, fmt.Errorf("import table: %s may import %s, which is not on a row above it", row.pkg, imp)
			}
		}
		r.floor[row.pkg] = i
	}
	return r, nil
}

// placed says whether dir has a row.
func (r *importRules) placed(dir string) bool {
	_, ok := r.floor[dir]
	return ok
}

// check returns why dir may not import path, or "" when it may (or path
// is not of the module). dir must have a row.
func (r *importRules) check(dir, path string) string {
	target, ok := strings.CutPrefix(path, r.module+"/")
	if !ok {
		if path == r.module {
			return fmt.Sprintf("%s imports the module's root package, which has no row in the import table", dir)
		}
		return ""
	}
	row := r.table[r.floor[dir]]
	if _, ok := row.imports[target]; ok {
		return ""
	}
	j, placed := r.floor[target]
	if _, ok := row.imports[anyBelow]; ok && placed && j < r.floor[dir] {
		return ""
	}
	switch {
	case !placed:
		return fmt.Sprintf("%s imports %s, which has no row in the import table (tools/archlint/imports.go): place it on its floor", dir, target)
	case j > r.floor[dir]:
		return fmt.Sprintf("%s imports %s, a package above it in the import table (tools/archlint/imports.go): imports run one way", dir, target)
	}
	return fmt.Sprintf("%s imports %s, which its row in the import table (tools/archlint/imports.go) does not allow: add the edge with its reason, or move the code", dir, target)
}

// modulePath reads the module path from root/go.mod.
func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", f.Name())
}
