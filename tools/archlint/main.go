// Command archlint checks the rules of the architecture (docs/architecture.md)
// over the Go files of a tree, test files and testdata left out:
//
//   - imports run one way: a package imports only the packages of the
//     module that its row of the import table allows (importTable, in
//     imports.go, bottom floor first; a row names only packages of rows
//     above it), and every package of the module has a row.
//   - flags live in cmd: no flag.FlagSet or flag.NewFlagSet outside cmd/
//     and the other commands (package main); flagSetsAllowed (flagsets.go)
//     would name an exception with its reason, and names none.
//   - no function or method takes more than six parameters: group them in
//     an options struct. Bindings that mirror a C API's signature are
//     allowed by name (allowedParams).
//   - no package-level var but errors (a declared type error, errors.New,
//     fmt.Errorf, or another sentinel by its name, ErrX), flags and flag sets (package flag),
//     registered DoFns (a value from Beam's register package or
//     internal/beamfn), //go:embed variables and the blank identifier's
//     compile-time assertions. Anything else is mutable global state: make
//     it a constant, a function returning a fresh value, or a field of the
//     value that uses it; the few that must stay are allowed by name with a
//     reason (allowedVars).
//
// It reads syntax only (go/parser), so it runs in a second over the whole
// tree, whatever the build tags. Usage: archlint [DIR] (default "."; DIR
// holds go.mod); it prints file:line: reason for each violation and exits 1
// when there is one. `make lint` runs it.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxParams is the most parameters a function may take.
const maxParams = 6

// allowedParams are the functions, as "dir.Name" or "dir.Type.Method" with
// dir relative to the root, that may take more than maxParams parameters:
// bindings that mirror the signature of the C function they call, so that
// a reader can hold one against the other.
func allowedParams() map[string]string {
	return map[string]string{
		// cblas_?gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
		// and cblas_?gemv, through gonum's blas.Float32/Float64 interface.
		"trainstep/cpu/cblas.Implementation.Sgemm": "mirrors cblas_sgemm",
		"trainstep/cpu/cblas.Implementation.Dgemm": "mirrors cblas_dgemm",
		"trainstep/cpu/cblas.Implementation.Sgemv": "mirrors cblas_sgemv",
		"trainstep/cpu/cblas.Implementation.Dgemv": "mirrors cblas_dgemv",
		"trainstep/cpu/cblas.gemmOK":               "checks the arguments of cblas_?gemm, as they come",
		"trainstep/cpu/cblas.gemvOK":               "checks the arguments of cblas_?gemv, as they come",
		"trainstep/cpu.gemm":                       "mirrors cblas_sgemm (gorgonia's BLAS)",
		// cublasSgemm(handle, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc).
		"trainstep/cuda.cublas.sgemm":  "mirrors cublasSgemm",
		"trainstep/cuda.gpu.gemm":      "mirrors cublasSgemm (the device's GEMM)",
		"trainstep/cuda.emulator.gemm": "mirrors cublasSgemm (the emulated device's GEMM)",
	}
}

// allowedVars are the package-level vars, as "dir.Name", that stay, each
// with the reason it must be a var.
func allowedVars() map[string]string {
	return map[string]string{
		"cmd/parastream.version":                "set by the linker: -ldflags -X main.version",
		"shards.shardCodec":                     "one zstd codec (a pool of encoders) shared by every shard Writer of the process: a codec per Writer cost 17 MB more allocated and 25 ms per Writer in BenchmarkWriter, and extraction opens a Writer per split per bucket",
		"transforms/internal/spill.spillFrames": "the compression frame buffers shared by the spill Writers: one per Writer doubled the memory of each open writer (BenchmarkSpillWriterMemory, 11 to 22 kB with 256 open)",
		"transforms/text.normPool":              "the scratch pool behind Normalize and AppendNormalized, whose tested guarantee is zero allocations a call; it goes when their callers (transforms.PrepareConfig) hold a text.Normalizer of their own",
		"trainstep/cpu.blasState":               "mirrors gorgonia's process-wide BLAS (G.Use), which is global in gorgonia itself: the choice and its fallback reason live beside it",
	}
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, err := run(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "archlint:", err)
		os.Exit(2)
	}
	printProblems(os.Stdout, problems)
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// run checks the module at root with the tool's tables.
func run(root string) ([]string, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	imports, err := newImportRules(module, importTable())
	if err != nil {
		return nil, err
	}
	return check(root, rules{params: allowedParams(), vars: allowedVars(), imports: imports, flagSets: flagSetsAllowed()})
}

// rules are the tables a check reads.
type rules struct {
	params   map[string]string // allowedParams
	vars     map[string]string // allowedVars
	imports  *importRules      // nil: imports are not checked
	flagSets map[string]string // flagSetsAllowed, by file path from the root
}

func printProblems(w io.Writer, problems []string) {
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
}

// check walks root and returns the violations, "file:line: reason", in
// file and line order. Directories named testdata or node_modules, and
// those starting with . or _, are left out below root.
func check(root string, r rules) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	unplaced := map[string]bool{} // packages reported as missing from the import table
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir := pathpkg.Dir(rel)
		if r.imports != nil && !r.imports.placed(dir) {
			if !unplaced[dir] {
				unplaced[dir] = true
				out = append(out, fmt.Sprintf("%s:1: package %s has no row in the import table (tools/archlint/imports.go): place it on its floor", path, dir))
			}
		}
		out = append(out, checkFile(fset, f, rel, r, unplaced[dir])...)
		return nil
	})
	return out, err
}

// checkFile returns the violations of one file, rel its path from the
// root, in line order. unplaced says its package has no row in the import
// table (already reported), so its imports are not checked.
func checkFile(fset *token.FileSet, f *ast.File, rel string, r rules, unplaced bool) []string {
	type problem struct {
		line int
		msg  string
	}
	var out []problem
	dir := pathpkg.Dir(rel)
	report := func(pos token.Pos, format string, args ...any) {
		p := fset.Position(pos)
		out = append(out, problem{p.Line, fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, fmt.Sprintf(format, args...))})
	}
	imports := importNames(f)
	if r.imports != nil && !unplaced {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why := r.imports.check(dir, path); why != "" {
				report(imp.Pos(), "%s", why)
			}
		}
	}
	if _, ok := r.flagSets[rel]; !ok && !inCmd(dir, f) {
		last := 0
		for _, n := range flagSetUses(f, imports) {
			if line := fset.Position(n.Pos()).Line; line != last {
				last = line
				report(n.Pos(), "flag sets are declared only in cmd: a library takes a config struct, and cmd declares its flags")
			}
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			n := d.Type.Params.NumFields()
			if n <= maxParams {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvType(d.Recv.List[0].Type) + "." + name
			}
			if _, ok := r.params[dir+"."+name]; !ok {
				report(d.Pos(), "%s takes %d parameters, more than %d: group them in an options struct", name, n, maxParams)
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				if embedded(d, vs) || isErrorType(vs.Type) {
					continue
				}
				for i, id := range vs.Names {
					if id.Name == "_" {
						continue
					}
					var value ast.Expr
					if i < len(vs.Values) {
						value = vs.Values[i]
					} else if len(vs.Values) == 1 {
						value = vs.Values[0] // var a, b = f()
					}
					if value != nil && allowedValue(value, imports) {
						continue
					}
					if _, ok := r.vars[dir+"."+id.Name]; ok {
						continue
					}
					report(id.Pos(), "package-level var %s is not an error, a flag or a registered DoFn: make it a constant, a function or a field", id.Name)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b problem) int { return a.line - b.line })
	msgs := make([]string, len(out))
	for i, p := range out {
		msgs[i] = p.msg
	}
	return msgs
}

// importNames maps each import's name in the file to its path.
func importNames(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

// allowedValue says whether a var's value is an error, a flag or a
// registered DoFn: a call of errors.New, fmt.Errorf, any function of
// package flag, of Beam's register package or of internal/beamfn; or
// another error by its name (ErrX, errX, pkg.ErrX).
func allowedValue(e ast.Expr, imports map[string]string) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.SelectorExpr: // another package's sentinel: compute.ErrNonFinite, net.ErrClosed
		return strings.HasPrefix(x.Sel.Name, "Err")
	case *ast.Ident:
		return strings.HasPrefix(x.Name, "Err") || strings.HasPrefix(x.Name, "err")
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	fun := call.Fun
	if ix, ok := fun.(*ast.IndexExpr); ok { // register.Function1x1[T](...)
		fun = ix.X
	} else if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch path := imports[pkg.Name]; {
	case path == "errors":
		return sel.Sel.Name == "New"
	case path == "fmt":
		return sel.Sel.Name == "Errorf"
	case path == "flag",
		path == "github.com/apache/beam/sdks/v2/go/pkg/beam/register",
		strings.HasSuffix(path, "/internal/beamfn"):
		return true
	}
	return false
}

func isErrorType(t ast.Expr) bool {
	id, ok := t.(*ast.Ident)
	return ok && id.Name == "error"
}

// embedded says whether a var has a //go:embed directive.
func embedded(d *ast.GenDecl, vs *ast.ValueSpec) bool {
	for _, g := range []*ast.CommentGroup{vs.Doc, d.Doc} {
		if g != nil && slices.ContainsFunc(g.List, func(c *ast.Comment) bool { return strings.HasPrefix(c.Text, "//go:embed ") }) {
			return true
		}
	}
	return false
}

// recvType is the name of a receiver's type: T of T, *T, T[K] and *T[K].
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
