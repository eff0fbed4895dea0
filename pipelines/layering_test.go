package pipelines_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fileMutators are the functions that write, rename or remove files. The
// shards package owns every file of an output (shards.Output, its Commit
// and its work directories); pipelines only builds and runs pipelines and
// reports summaries, so none of these may appear in it.
var fileMutators = map[string][]string{
	"os": {"Create", "CreateTemp", "OpenFile", "WriteFile", "Rename", "Remove", "RemoveAll",
		"Mkdir", "MkdirAll", "MkdirTemp", "Link", "Symlink", "Truncate", "Chmod", "Chtimes", "CopyFS"},
	"io/ioutil": {"WriteFile", "TempFile", "TempDir"},
	"github.com/parastream/parastream/internal/atomicfile": nil, // any use writes files
}

// TestPipelinesMutateNoFiles fails if a non-test file of pipelines calls a
// function that writes, renames or removes files: those belong in shards
// (or in the DoFns of transforms and featurize, which write into a work
// directory that shards.Output gave).
func TestPipelinesMutateNoFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		local := map[string]string{} // import name in this file → import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if _, watched := fileMutators[p]; !watched {
				continue
			}
			n := p[strings.LastIndexByte(p, '/')+1:]
			if imp.Name != nil {
				n = imp.Name.Name
			}
			local[n] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			p, ok := local[id.Name]
			if !ok {
				return true
			}
			banned := fileMutators[p]
			if banned == nil || slices.Contains(banned, sel.Sel.Name) {
				t.Errorf("%s: pipelines calls %s.%s: writing, renaming or removing files belongs in shards (shards.Output, Commit)",
					fset.Position(sel.Pos()), p, sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no Go files found: the test must run in the pipelines directory")
	}
}
