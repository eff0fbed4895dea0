package corpora

import (
	"bytes"
	"strings"
)

// collapseSpace trims s and replaces every run of white space inside it by
// one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// findColumns returns the index of each of names among header's fields
// (trimmed), -1 where absent.
func findColumns(header [][]byte, names []string) []int {
	cols := make([]int, len(names))
	for c, name := range names {
		cols[c] = -1
		for i, f := range header {
			if string(bytes.TrimSpace(f)) == name {
				cols[c] = i
				break
			}
		}
	}
	return cols
}

// splitName returns the split a file name names: "train" where it holds
// train, "dev" where it holds dev, trial or valid, "test" where it holds
// test, and def otherwise.
func splitName(name, def string) string {
	name = strings.ToLower(name)
	switch {
	case strings.Contains(name, "train"):
		return "train"
	case strings.Contains(name, "dev"), strings.Contains(name, "trial"), strings.Contains(name, "valid"):
		return "dev"
	case strings.Contains(name, "test"):
		return "test"
	}
	return def
}
