package stream

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"
)

// TestAddClientOptionRecipe is the stream half of docs/architecture.md's
// recipe "Add a Kafka client option": every field of ClientConfig is
// checked by Validate (or says here why it needs no check) and read by the
// code that builds the connections, transport (kafka.Writer and
// kafka.Client), dialer (kafka.Reader and check) or client, directly or
// through mechanism and clientID. A field added without those steps fails
// here; the command line's half (its flag, its help group, its line in
// docs/stream.md) is checked by the cli package's test of the same name.
func TestAddClientOptionRecipe(t *testing.T) {
	noCheck := map[string]string{
		"TLS":      "LoadTLS checks the files it loads; any *tls.Config is usable",
		"ClientID": "any name will do; \"\" means parastream",
	}
	// retryFor: how long the connections' failed requests are tried again.
	builders := []string{"transport", "dialer", "client", "mechanism", "clientID", "retryFor"}
	reads := clientConfigReads(t, "client.go")
	typ := reflect.TypeFor[ClientConfig]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if _, ok := noCheck[name]; !ok && !slices.Contains(reads["Validate"], name) {
			t.Errorf("ClientConfig.%s is not checked by Validate: check it there, saying how to fix a bad value, or say here why it needs no check", name)
		}
		if !slices.ContainsFunc(builders, func(b string) bool { return slices.Contains(reads[b], name) }) {
			t.Errorf("ClientConfig.%s is read by none of %v: the connections never use it", name, builders)
		}
	}
	for name := range noCheck {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("noCheck names %s, which ClientConfig does not have", name)
		}
	}
}

// clientConfigReads parses file and returns, for each method of
// ClientConfig, the fields of its receiver it reads (c.Field).
func clientConfigReads(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || len(fn.Recv.List[0].Names) != 1 {
			continue
		}
		if id, ok := fn.Recv.List[0].Type.(*ast.Ident); !ok || id.Name != "ClientConfig" {
			continue
		}
		recv := fn.Recv.List[0].Names[0].Name
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == recv {
					out[fn.Name.Name] = append(out[fn.Name.Name], sel.Sel.Name)
				}
			}
			return true
		})
	}
	return out
}
