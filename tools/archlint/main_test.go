package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck runs the checks on testdata/src/sample, which has each kind of
// violation and each exemption: only the violations are reported, with
// their file and line, and the sample's test file is not read.
func TestCheck(t *testing.T) {
	// Allow-lists name a package by its directory from the root checked.
	params := map[string]string{"sample.cgemm": "mirrors a C signature"}
	vars := map[string]string{"sample.Version": "set by the linker"}
	got, err := check("testdata/src", rules{params: params, vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "src", "sample", "sample.go")
	want := []string{
		file + ":22: flag sets are declared only in cmd: a library takes a config struct, and cmd declares its flags",
		file + ":35: package-level var Table is not an error, a flag or a registered DoFn: make it a constant, a function or a field",
		file + ":36: package-level var count is not an error, a flag or a registered DoFn: make it a constant, a function or a field",
		file + ":39: package-level var cache is not an error, a flag or a registered DoFn: make it a constant, a function or a field",
		file + ":51: seven takes 7 parameters, more than 6: group them in an options struct",
		file + ":56: server.handle takes 7 parameters, more than 6: group them in an options struct",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOwnCode: the tool passes its own checks (testdata is never read
// below the root).
func TestOwnCode(t *testing.T) {
	got, err := check(".", rules{params: allowedParams(), vars: allowedVars(), flagSets: flagSetsAllowed()})
	if err != nil || len(got) != 0 {
		t.Errorf("%q, %v", got, err)
	}
}
