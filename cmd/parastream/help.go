package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// flagGroup is one heading of a command's --help and the flags under it,
// in the order shown.
type flagGroup struct {
	title string
	names []string
}

// describe replaces the --help of fs with one grouped by groups, followed
// by example: one line a flag. Flags no group names are shown under
// "other"; Beam's own flags (see addBeamFlags) are shown only by
// --help-beam.
func describe(fs *flag.FlagSet, e *env, usage, example string, groups ...flagGroup) {
	fs.Usage = func() { printUsage(e.stdout, fs, usage, example, groups) }
}

// printUsage writes a command's help: usage, its own flags one a line
// under their groups, and an example.
func printUsage(w io.Writer, fs *flag.FlagSet, usage, example string, groups []flagGroup) {
	fmt.Fprintf(w, "usage: %s\n", usage)
	shown := map[string]bool{}
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		if !isBeamFlag(fs, f.Name) && !slices.ContainsFunc(groups, func(g flagGroup) bool { return slices.Contains(g.names, f.Name) }) {
			other = append(other, f.Name)
		}
	})
	if len(other) > 0 {
		title := "other"
		if len(groups) == 0 {
			title = "flags"
		}
		groups = append(groups, flagGroup{title: title, names: other})
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
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
// addBeamFlags.
func isBeamFlag(fs *flag.FlagSet, name string) bool {
	f, g := fs.Lookup(name), flag.CommandLine.Lookup(name)
	return f != nil && g != nil && f.Value == g.Value
}

// beamHelp is the --help-beam flag of the commands that run Beam pipelines.
type beamHelp struct {
	e   *env
	cmd string
	set bool
}

func (b *beamHelp) String() string   { return "false" }
func (b *beamHelp) IsBoolFlag() bool { return true }
func (b *beamHelp) Set(s string) (err error) {
	b.set, err = strconv.ParseBool(s)
	return err
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
