// Package evaltest holds what the tests of evalsink and its subpackages
// share: the Python reference checks (PythonWith, Run: a script under the
// test's testdata/ fed JSON on its stdin, its JSON answer decoded) and
// fixtures. It is for tests only.
package evaltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PythonWith is Debian's python3 when it imports modules (the Debian
// package pkg holds them), or skips the test; with the environment
// variable require set to 1 (as CI sets it) it fails the test instead.
func PythonWith(t *testing.T, modules, pkg, require string) string {
	t.Helper()
	const py = "/usr/bin/python3"
	err := exec.Command(py, "-c", "import "+modules).Run()
	if err == nil {
		return py
	}
	msg := fmt.Sprintf("%s check: %s importing %s is missing (apt-get install -y %s): %v", pkg, py, modules, pkg, err)
	if os.Getenv(require) == "1" {
		t.Fatalf("%s (%s=1 makes this a failure)", msg, require)
	}
	t.Skip("skipping " + msg)
	return ""
}

// Run runs testdata/<script> with python py, in as JSON on its stdin,
// and decodes its stdout's JSON into out.
func Run(t *testing.T, py, script string, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", script))
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(got, out); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}
