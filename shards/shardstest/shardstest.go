// Package shardstest holds test helpers for outputs committed through
// shards: what a reader that follows the manifest sees.
package shardstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/shards"
)

// ReaderView is what a reader that follows the manifest sees under root,
// checked against the manifest's checksums: the manifest and the files it
// names, by relative path.
func ReaderView(t testing.TB, root string) map[string]string {
	t.Helper()
	m, err := shards.ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(root); err != nil {
		t.Fatalf("the output does not verify: %v", err)
	}
	view := map[string]string{}
	for _, p := range append([]string{shards.ManifestName}, m.Paths()...) {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		view[p] = string(b)
	}
	return view
}

// ViewOf is ReaderView of a tree already read (relative path → contents),
// without the checksums; nil when the tree holds no readable manifest.
func ViewOf(tree map[string]string) map[string]string {
	var m shards.Manifest
	if err := json.Unmarshal([]byte(tree[shards.ManifestName]), &m); err != nil {
		return nil
	}
	view := map[string]string{shards.ManifestName: tree[shards.ManifestName]}
	for _, p := range m.Paths() {
		view[p] = tree[p]
	}
	return view
}
