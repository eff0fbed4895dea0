package corpora

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Options configure a reader. The zero value is the defaults.
type Options struct {
	// Limits bound line length, decompressed size and kept reject bytes.
	Limits Limits
	// Dataset overrides the dataset name a reader derives from file names.
	Dataset string
	// LangA and LangB override the languages a reader assumes or derives
	// (Europarl and Moses derive them from file names such as fr-en).
	LangA, LangB string
	// Encoding is the text encoding of the inputs: "utf-8" (the default) or
	// "latin1", converted to UTF-8 as it is read.
	Encoding string
	// Tier sets PPDB's size tier (s, m, l, xl, xxl, xxxl) where the file
	// name does not give it.
	Tier string
}

// Format describes one input format: how many files it reads and what they
// are, how its records map to Example, and how to open it.
type Format struct {
	// Name is the format's name on the command line, such as
	// "reddit-comments".
	Name string
	// Corpus is the value of Example.Corpus it yields.
	Corpus string
	// Files names the role of each input file, such as ["en", "fr"]; most
	// formats read one file.
	Files []string
	// Summary is one line about the format.
	Summary string
	// Mapping documents what the Example fields mean for this format.
	Mapping string
	// New builds a reader over opened inputs, one per entry of Files. The
	// reader closes them.
	New func(inputs []*Input, opts Options) (Reader, error)
	// Eval says whether the format is an evaluation set, its task, its
	// official split and whether its rows are single texts; the zero
	// value for a training corpus.
	Eval Eval
}

// formatList returns every format, built fresh: each reader's file has a
// function returning its formats, and adding a format is one line here.
func formatList() []Format {
	return slices.Concat(
		europarlFormats(),
		mosesFormats(),
		msrpFormats(),
		mrSSTFormats(),
		ppdbFormats(),
		quoraFormats(),
		redditFormats(),
		scwsFormats(),
		semEvalFormats(),
		simpWikiFormats(),
		snliFormats(),
		stsFormats(),
		trecQAFormats(),
	)
}

// registry holds formats by name.
type registry map[string]Format

// formats returns the registry of formatList.
func formats() registry {
	fs := formatList()
	r := make(registry, len(fs))
	for _, f := range fs {
		r.register(f)
	}
	return r
}

// register adds a format; a name registered twice is a programmer error.
func (r registry) register(f Format) {
	if _, dup := r[f.Name]; dup {
		panic("corpora: format registered twice: " + f.Name)
	}
	r[f.Name] = f
}

// Formats lists the formats by name.
func Formats() []Format { return formats().list() }

func (r registry) list() []Format {
	out := make([]Format, 0, len(r))
	for _, f := range r {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupFormat finds a format by name.
func LookupFormat(name string) (Format, error) { return formats().lookup(name) }

func (r registry) lookup(name string) (Format, error) {
	f, ok := r[name]
	if !ok {
		names := make([]string, 0, len(r))
		for n := range r {
			names = append(names, n)
		}
		sort.Strings(names)
		return Format{}, fmt.Errorf("unknown format %q (known: %s)", name, strings.Join(names, ", "))
	}
	return f, nil
}

// OpenFormat opens paths (one per entry of the format's Files) and returns
// the format's reader over them.
func OpenFormat(name string, paths []string, opts Options) (Reader, error) {
	return formats().open(name, paths, opts)
}

func (r registry) open(name string, paths []string, opts Options) (Reader, error) {
	f, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	if len(paths) != len(f.Files) {
		return nil, fmt.Errorf("format %s reads %d file(s) (%s), got %d", name, len(f.Files), strings.Join(f.Files, ", "), len(paths))
	}
	inputs := make([]*Input, 0, len(paths))
	closeAll := func() {
		for _, in := range inputs {
			in.Close()
		}
	}
	for _, p := range paths {
		in, err := Open(p, opts.Limits)
		if err != nil {
			closeAll()
			return nil, err
		}
		inputs = append(inputs, in)
	}
	rd, err := NewReader(f, inputs, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	return rd, nil
}

// NewReader builds the format's reader over opened inputs, one per entry of
// f.Files, applying the options every format shares (Encoding). The reader
// closes the inputs.
func NewReader(f Format, inputs []*Input, opts Options) (Reader, error) {
	if len(inputs) != len(f.Files) {
		return nil, fmt.Errorf("format %s reads %d file(s) (%s), got %d", f.Name, len(f.Files), strings.Join(f.Files, ", "), len(inputs))
	}
	for _, in := range inputs {
		if err := in.SetEncoding(opts.Encoding); err != nil {
			return nil, err
		}
	}
	return f.New(inputs, opts)
}

// baseName is a path's file name without directories or compression
// suffixes (.gz, .bz2, .xz, .zst).
func baseName(path string) string {
	name := filepath.Base(path)
	for _, ext := range []string{".gz", ".bz2", ".xz", ".zst", ".zstd"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}
