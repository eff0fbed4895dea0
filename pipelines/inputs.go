package pipelines

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parastream/parastream/corpora"
)

// Corpora lists the names ExtractConfig.Corpus accepts: reddit, and every
// corpora format but Reddit's own two.
func Corpora() []string {
	names := []string{"reddit"}
	for _, f := range corpora.Formats() {
		if f.Corpus != "reddit" {
			names = append(names, f.Name)
		}
	}
	return names
}

// ResolveInputs checks the local input globs before a run, so that a
// mistake fails in one line rather than inside the pipeline: a glob that
// matches nothing, an STS glob that matches files other than
// STS.input.<set>.txt. An input that is a directory is replaced by the
// glob of the files the corpus reads in it (STS: its STS.input.*.txt files
// or those of its year directories; one-file formats: its files), or fails
// naming the glob to pass. Globs with a scheme (gs://, s3://) are left to
// Beam's filesystems.
func (c *ExtractConfig) ResolveInputs() error {
	f, err := corpora.LookupFormat(c.formatOf())
	if err != nil {
		return fmt.Errorf("--corpus: %w", err)
	}
	if c.Input, err = resolveInput("--input", c.Input, f, c.InputB == ""); err != nil {
		return err
	}
	if c.InputB != "" {
		if c.InputB, err = resolveInput("--input-b", c.InputB, f, false); err != nil {
			return err
		}
	}
	if c.Submissions != "" {
		sub, _ := corpora.LookupFormat("reddit-submissions")
		if c.Submissions, err = resolveInput("--submissions", c.Submissions, sub, false); err != nil {
			return err
		}
	}
	return nil
}

// stsGlobs returns where a directory's STS input files are looked for.
func stsGlobs() []string { return []string{"STS*.input.*.txt", filepath.Join("*", "STS*.input.*.txt")} }

// resolveInput checks one input glob of format f; stsGold says the STS
// gold files are found beside the inputs (no --input-b).
func resolveInput(flagName, glob string, f corpora.Format, stsGold bool) (string, error) {
	if glob == "" || strings.Contains(glob, "://") {
		return glob, nil
	}
	sts := f.Name == "sts" && stsGold
	if st, err := os.Stat(glob); err == nil && st.IsDir() {
		return resolveDir(flagName, glob, f, sts)
	}
	paths, err := filepath.Glob(glob)
	if err != nil {
		return "", fmt.Errorf("%s %q: %v", flagName, glob, err)
	}
	if len(paths) == 0 {
		return "", noMatch(flagName, glob)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return "", fmt.Errorf("%s %q matches the directory %s: pass a glob of files only", flagName, glob, p)
		}
		if sts && corpora.STSGoldPath(p) == "" {
			return "", fmt.Errorf("%s %q matches %s, not an STS input file (STS.input.<set>.txt): pass --input '%s', or its gold files with --input-b",
				flagName, glob, p, filepath.Join(filepath.Dir(p), "STS.input.*.txt"))
		}
	}
	return glob, nil
}

// resolveDir is the glob of the files format f reads in directory dir.
func resolveDir(flagName, dir string, f corpora.Format, sts bool) (string, error) {
	if sts {
		for _, g := range stsGlobs() {
			glob := filepath.Join(dir, g)
			if m, _ := filepath.Glob(glob); len(m) > 0 {
				return glob, nil
			}
		}
		return "", fmt.Errorf("%s %s: no STS.input.<set>.txt files in the directory or its subdirectories: pass a glob of the input files, such as --input '%s'",
			flagName, dir, filepath.Join(dir, "*", "STS.input.*.txt"))
	}
	if f.Name == "trecqa" {
		// A TrecQA folder, or a folder of them: their a.toks.
		for _, g := range []string{"a.toks", filepath.Join("*", "a.toks")} {
			if m, _ := filepath.Glob(filepath.Join(dir, g)); len(m) > 0 {
				return filepath.Join(dir, g), nil
			}
		}
		return "", fmt.Errorf("%s %s: no a.toks in the directory or its subdirectories: pass a TrecQA folder (a.toks, b.toks, sim.txt, id.txt)", flagName, dir)
	}
	if len(f.Files) == 2 {
		return "", fmt.Errorf("%s %s is a directory, but %s reads pairs of files (%s): pass a glob of each side, such as --input '%s' --input-b '%s'",
			flagName, dir, f.Name, strings.Join(f.Files, ", "), filepath.Join(dir, "*."+f.Files[0]), filepath.Join(dir, "*."+f.Files[1]))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", flagName, dir, err)
	}
	hidden := slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".") })
	files := slices.DeleteFunc(slices.Clone(entries), func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".") })
	if len(files) == 0 {
		return "", fmt.Errorf("%s %s: the directory is empty: pass a glob of the %s files", flagName, dir, f.Name)
	}
	for _, e := range files {
		if !e.Type().IsRegular() {
			return "", fmt.Errorf("%s %s: the directory holds %s, which is not a file: pass a glob of the %s files, such as '%s'",
				flagName, dir, e.Name(), f.Name, filepath.Join(dir, "*"+filepath.Ext(files[0].Name())))
		}
	}
	if hidden {
		return "", fmt.Errorf("%s %s: the directory holds hidden files too: pass a glob of the %s files, such as '%s'",
			flagName, dir, f.Name, filepath.Join(dir, "*"+filepath.Ext(files[0].Name())))
	}
	return filepath.Join(dir, "*"), nil
}

// noMatch says that glob matches no file and, where it can tell, why.
func noMatch(flagName, glob string) error {
	dir := filepath.Dir(glob)
	for dir != "." && dir != string(filepath.Separator) && strings.ContainsAny(dir, "*?[") {
		dir = filepath.Dir(dir)
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s %q matches no file: there is no directory %s", flagName, glob, dir)
	}
	return fmt.Errorf("%s %q matches no file in %s: check the name, or quote the glob so the shell passes it whole", flagName, glob, dir)
}
