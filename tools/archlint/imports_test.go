package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (path from dir: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanTree is a module of three floors that follows its table
// (treeTable), with a test file that may import upward and a command with
// its flag set.
func cleanTree() map[string]string {
	return map[string]string{
		"go.mod":                "module example.com/m\n\ngo 1.26\n",
		"base/base.go":          "package base\n",
		"mid/mid.go":            "package mid\n\nimport _ \"example.com/m/base\"\n",
		"mid/mid_test.go":       "package mid_test\n\nimport _ \"example.com/m/top\"\n",
		"top/top.go":            "package top\n\nimport (\n\t_ \"example.com/m/base\"\n\t_ \"example.com/m/mid\"\n\t_ \"fmt\"\n)\n",
		"cmd/m/main.go":         "package main\n\nimport (\n\t\"flag\"\n\n\t_ \"example.com/m/top\"\n)\n\nfunc main() { fs := flag.NewFlagSet(\"m\", flag.ExitOnError); _ = fs }\n",
		"tools/t/main.go":       "package main\n\nimport \"flag\"\n\nfunc run(fs *flag.FlagSet) {}\n\nfunc main() {}\n",
		"mid/legacy_flags.go":   "package mid\n\nimport \"flag\"\n\nfunc Flags(fs *flag.FlagSet) {}\n",
		"base/testdata/x.go":    "package x\n\nimport _ \"example.com/m/top\"\n",
		"top/internal/y/y.go":   "package y\n\nimport _ \"example.com/m/base\"\n",
		"top/internal/y/doc.go": "// Package y is placed.\npackage y\n",
	}
}

// treeTable is cleanTree's import table, with a row for a package that
// does not exist yet.
func treeTable() []floor {
	return []floor{
		{pkg: "base"},
		{pkg: "mid", imports: edges("base")},
		{pkg: "later", imports: edges("base")}, // no directory yet: allowed
		{pkg: "top/internal/y", imports: edges("base")},
		{pkg: "top", imports: map[string]string{"base": "", "mid": "the reason for an edge"}},
		{pkg: "cmd/m", imports: edges(anyBelow)},
		{pkg: "tools/t"},
	}
}

func checkTree(t *testing.T, dir string) []string {
	t.Helper()
	module, err := modulePath(dir)
	if err != nil {
		t.Fatal(err)
	}
	imports, err := newImportRules(module, treeTable())
	if err != nil {
		t.Fatal(err)
	}
	got, err := check(dir, rules{imports: imports, flagSets: map[string]string{"mid/legacy_flags.go": "moving to cmd"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.ToSlash(strings.TrimPrefix(got[i], dir+string(filepath.Separator)))
	}
	return got
}

// TestImportsClean: a tree that follows its table passes, its test files,
// testdata, commands and allowlisted flag file included.
func TestImportsClean(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, cleanTree())
	if got := checkTree(t, dir); len(got) != 0 {
		t.Errorf("clean tree: %q", got)
	}
}

// TestImportsPlanted plants an upward import, an import the row does not
// allow, a package without a row and a library's flag set: each fails
// with its file, line and rule.
func TestImportsPlanted(t *testing.T) {
	dir := t.TempDir()
	files := cleanTree()
	files["base/up.go"] = "package base\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/top\"\n)\n"
	files["mid/side.go"] = "package mid\n\nimport _ \"example.com/m/top/internal/y\"\n"
	files["top/up2.go"] = "package top\n\nimport _ \"example.com/m/cmd/m\"\n"
	files["newpkg/new.go"] = "package newpkg\n\nimport _ \"example.com/m/top\"\n"
	files["mid/flags.go"] = "package mid\n\nimport \"flag\"\n\nfunc Register(fs *flag.FlagSet) {\n\t_ = flag.NewFlagSet(\"x\", flag.ContinueOnError)\n}\n"
	writeTree(t, dir, files)
	want := []string{
		"base/up.go:6: base imports top, a package above it in the import table (tools/archlint/imports.go): imports run one way",
		"mid/flags.go:5: flag sets are declared only in cmd: a library takes a config struct, and cmd declares its flags",
		"mid/flags.go:6: flag sets are declared only in cmd: a library takes a config struct, and cmd declares its flags",
		"mid/side.go:3: mid imports top/internal/y, a package above it in the import table (tools/archlint/imports.go): imports run one way",
		"newpkg/new.go:1: package newpkg has no row in the import table (tools/archlint/imports.go): place it on its floor",
		"top/up2.go:3: top imports cmd/m, a package above it in the import table (tools/archlint/imports.go): imports run one way",
	}
	got := checkTree(t, dir)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestImportsNotAllowed: a downward import that the row does not name
// fails too, and so does an import of a package without a row.
func TestImportsNotAllowed(t *testing.T) {
	r, err := newImportRules("example.com/m", treeTable())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, path, want string }{
		{"top/internal/y", "example.com/m/mid", "top/internal/y imports mid, which its row in the import table (tools/archlint/imports.go) does not allow: add the edge with its reason, or move the code"},
		{"mid", "example.com/m/nowhere", "mid imports nowhere, which has no row in the import table (tools/archlint/imports.go): place it on its floor"},
		{"cmd/m", "example.com/m/tools/t", "cmd/m imports tools/t, a package above it in the import table (tools/archlint/imports.go): imports run one way"},
		{"cmd/m", "example.com/m/later", ""},
		{"mid", "example.com/mother", ""}, // another module
		{"mid", "fmt", ""},
	} {
		if got := r.check(c.dir, c.path); got != c.want {
			t.Errorf("%s importing %s: %q, want %q", c.dir, c.path, got, c.want)
		}
	}
}

// TestImportTableShape: a table that names a package twice, or lets a row
// import one that is not above it, is refused; the tool's own table is
// accepted.
func TestImportTableShape(t *testing.T) {
	for _, table := range [][]floor{
		{{pkg: "a"}, {pkg: "a"}},
		{{pkg: "a", imports: edges("b")}, {pkg: "b"}},
		{{pkg: "a", imports: edges("a")}},
		{{pkg: "a", imports: edges("nowhere")}},
	} {
		if _, err := newImportRules("m", table); err == nil {
			t.Errorf("%v accepted", table)
		}
	}
	if _, err := newImportRules("m", importTable()); err != nil {
		t.Error(err)
	}
}

// TestModulePath reads the module line of go.mod.
func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"go.mod": "// a comment\nmodule \"example.com/q\"\n\ngo 1.26\n"})
	if got, err := modulePath(dir); got != "example.com/q" || err != nil {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := modulePath(t.TempDir()); err == nil {
		t.Error("no go.mod: no error")
	}
}
