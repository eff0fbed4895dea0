package corpora

import (
	"fmt"
	"path/filepath"
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
}

var formats = map[string]Format{}

// register adds a format; readers call it from init.
func register(f Format) {
	if _, dup := formats[f.Name]; dup {
		panic("corpora: format registered twice: " + f.Name)
	}
	formats[f.Name] = f
}

// Formats lists the registered formats by name.
func Formats() []Format {
	out := make([]Format, 0, len(formats))
	for _, f := range formats {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupFormat finds a format by name.
func LookupFormat(name string) (Format, error) {
	f, ok := formats[name]
	if !ok {
		names := make([]string, 0, len(formats))
		for n := range formats {
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
	f, err := LookupFormat(name)
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
	r, err := NewReader(f, inputs, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	return r, nil
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
