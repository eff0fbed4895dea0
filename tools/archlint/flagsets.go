package main

import (
	"go/ast"
	"strings"
)

// flagSetsAllowed are the files outside cmd/ that may declare flags on a
// flag.FlagSet, by their path from the root, each with its reason. None:
// a library takes a config struct with Validate, and cmd declares its
// flags (docs/architecture.md).
func flagSetsAllowed() map[string]string {
	return map[string]string{}
}

// inCmd says whether a package, by its directory from the root, may use
// flag sets: cmd/ and below, and any command (package main), as the tools
// under tools/ are.
func inCmd(dir string, f *ast.File) bool {
	return dir == "cmd" || strings.HasPrefix(dir, "cmd/") || f.Name.Name == "main"
}

// flagSetUses returns the position of each line of f that names
// flag.FlagSet or flag.NewFlagSet (a *flag.FlagSet parameter included),
// once a line.
func flagSetUses(f *ast.File, imports map[string]string) []ast.Node {
	var out []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if ok && imports[pkg.Name] == "flag" && (sel.Sel.Name == "FlagSet" || sel.Sel.Name == "NewFlagSet") {
			out = append(out, sel)
		}
		return true
	})
	return out
}
