package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FlagGroup is one heading of a command's --help and the flags under it,
// in the order shown.
type FlagGroup struct {
	Title string
	Names []string
}

// Describe replaces the --help of fs with one grouped by groups, followed
// by example, written to stdout: one line a flag. Flags no group names are
// shown under "other"; Beam's own flags (see AddBeamFlags) are shown only
// by --help-beam.
func Describe(fs *flag.FlagSet, stdout io.Writer, usage, example string, groups ...FlagGroup) {
	fs.Usage = func() { printUsage(stdout, fs, usage, example, groups) }
}

// printUsage writes a command's help: usage, its own flags one a line
// under their groups, and an example.
func printUsage(w io.Writer, fs *flag.FlagSet, usage, example string, groups []FlagGroup) {
	fmt.Fprintf(w, "usage: %s\n", usage)
	shown := map[string]bool{}
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		if !isBeamFlag(fs, f.Name) && !slices.ContainsFunc(groups, func(g FlagGroup) bool { return slices.Contains(g.Names, f.Name) }) {
			other = append(other, f.Name)
		}
	})
	if len(other) > 0 {
		title := "other"
		if len(groups) == 0 {
			title = "flags"
		}
		groups = append(groups, FlagGroup{Title: title, Names: other})
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.Title)
		for _, name := range g.Names {
			if f := fs.Lookup(name); f != nil && !shown[name] {
				shown[name] = true
				fmt.Fprintln(w, flagLine(f))
			}
		}
	}
	if example != "" {
		fmt.Fprintf(w, "\nexample:\n  %s\n", strings.ReplaceAll(example, "\n", "\n  "))
	}
}

// flagLine is one flag's line of help: name, value, usage and default.
func flagLine(f *flag.Flag) string {
	kind, usage := flag.UnquoteUsage(f)
	name := "--" + f.Name
	if kind != "" {
		name += " " + kind
	}
	line := fmt.Sprintf("  %-22s %s", name, usage)
	if len(name) >= 22 {
		line = fmt.Sprintf("  %s  %s", name, usage)
	}
	if def := f.DefValue; def != "" && def != "0" && def != "false" && !strings.Contains(usage, "default") {
		if kind == "string" || kind == "" && def != "true" {
			def = strconv.Quote(def)
		}
		line += " (default " + def + ")"
	}
	return line
}

// isBeamFlag says whether fs's flag name is one of Beam's, added by
// AddBeamFlags.
func isBeamFlag(fs *flag.FlagSet, name string) bool {
	f, g := fs.Lookup(name), flag.CommandLine.Lookup(name)
	return f != nil && g != nil && f.Value == g.Value
}

// beamHelp is the --help-beam flag of the commands that run Beam pipelines.
type beamHelp struct {
	stdout io.Writer
	cmd    string
	set    bool
}

func (b *beamHelp) String() string   { return "false" }
func (b *beamHelp) IsBoolFlag() bool { return true }
func (b *beamHelp) Set(s string) (err error) {
	b.set, err = strconv.ParseBool(s)
	return err
}

// AddBeamFlags makes Beam's own flags (registered on the default flag set
// by the SDK and its runners) parse on fs too, so that --runner,
// --endpoint, --environment_type and the cloud options pass through, and
// adds --help-beam, which lists them on stdout; --help leaves them out.
func AddBeamFlags(fs *flag.FlagSet, stdout io.Writer) {
	fs.Var(&beamHelp{stdout: stdout, cmd: fs.Name()}, "help-beam", "list Beam's runner and cloud flags (--runner, --endpoint, ...), accepted here too")
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) == nil && !strings.HasPrefix(f.Name, "test.") {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
}

func printBeamFlags(w io.Writer, cmd string) {
	var names []string
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	fmt.Fprintf(w, "Beam's flags, accepted by %s:\n", cmd)
	for _, n := range names {
		f := flag.CommandLine.Lookup(n)
		fmt.Fprintf(w, "  --%s (default %q)\n      %s\n", n, f.DefValue, f.Usage)
	}
}

// closestFlag is fs's flag nearest to name, or "" when none is near.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if isBeamFlag(fs, f.Name) {
			return
		}
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
