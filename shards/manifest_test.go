package shards_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/parastream/parastream/shards"
)

// buildRun writes a small run under root: two splits of sts, an empty
// split, a vocabulary and a rejects file, and returns its manifest.
func buildRun(t *testing.T, root string) *shards.Manifest {
	t.Helper()
	m := shards.NewManifest([]string{"parastream", "extract", "--out", "out"})
	m.AddSplit("sts", "train", writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 40}, testRows(30, 100))...)
	m.AddSplit("sts", "dev", writeSplit(t, root, "sts", "dev", shards.WriterOptions{}, testRows(31, 10))...)
	m.AddSplit("sts", "test", writeSplit(t, root, "sts", "test", shards.WriterOptions{}, nil)...)

	if err := os.WriteFile(filepath.Join(root, "vocab.txt"), []byte("the\na\nof\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "rejects-sts.jsonl"), []byte(`{"reason":"bad_number"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, err := shards.NewArtifact(root, "vocab.txt", 3)
	if err != nil {
		t.Fatal(err)
	}
	m.Vocabulary = &vocab
	rejects, err := shards.NewArtifact(root, "rejects-sts.jsonl", 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Rejects = append(m.Rejects, rejects)
	m.Stats = map[string]int64{"records_read": 111, "rejected.bad_number": 1}
	return m
}

func TestManifestRoundTrip(t *testing.T) {
	root := t.TempDir()
	m := buildRun(t, root)
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	got, err := shards.ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, m)
	}
	if err := got.Verify(root); err != nil {
		t.Errorf("Verify of an intact run: %v", err)
	}

	train := got.Splits[shards.SplitKey("sts", "train")]
	wantShards := []string{"sts/train/part-00000-of-00003.parquet", "sts/train/part-00001-of-00003.parquet", "sts/train/part-00002-of-00003.parquet"}
	if train.Rows != 100 || !slices.Equal(train.Shards, wantShards) {
		t.Errorf("split sts/train = %+v, want 100 rows in %v", train, wantShards)
	}
	if test, ok := got.Splits["sts/test"]; !ok || test.Rows != 0 || len(test.Shards) != 0 {
		t.Errorf("the empty split is recorded as %+v (present: %v), want 0 rows and no shards", test, ok)
	}
	if !slices.IsSortedFunc(got.Files, func(a, b shards.ShardInfo) int { return strings.Compare(a.Path, b.Path) }) {
		t.Error("Files are not sorted by path")
	}
	if got.SchemaVersion != shards.SchemaVersion || got.CreatedBy.GoVersion != runtime.Version() {
		t.Errorf("SchemaVersion %d, GoVersion %q", got.SchemaVersion, got.CreatedBy.GoVersion)
	}
}

// TestManifestDeterministic builds the same run twice, adding in different
// orders, and wants byte-identical manifests without timestamps.
func TestManifestDeterministic(t *testing.T) {
	var manifests [][]byte
	for i := range 2 {
		root := t.TempDir()
		m := buildRun(t, root)
		if i == 1 {
			// Same content, added in another order.
			files := slices.Clone(m.Files)
			slices.Reverse(files)
			m.Files = nil
			m.Add(files...)
		}
		if err := shards.WriteManifest(root, m); err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, readBytes(t, filepath.Join(root, shards.ManifestName)))
	}
	if !bytes.Equal(manifests[0], manifests[1]) {
		t.Errorf("two runs gave different manifests:\n%s\n----\n%s", manifests[0], manifests[1])
	}
	var generic map[string]any
	if err := json.Unmarshal(manifests[0], &generic); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"time", "date", "created_at", "host"} {
		if bytes.Contains(bytes.ToLower(manifests[0]), []byte(`"`+word)) {
			t.Errorf("the manifest holds a %q field:\n%s", word, manifests[0])
		}
	}
	if !bytes.HasSuffix(manifests[0], []byte("}\n")) || !bytes.Contains(manifests[0], []byte("\n  \"schema_version\": 1,")) {
		t.Errorf("the manifest is not indented JSON ending in a newline:\n%s", manifests[0])
	}
}

func TestManifestAdd(t *testing.T) {
	m := shards.NewManifest(nil)
	a := shards.ShardInfo{Path: "c/train/part-00001-of-00002.parquet", Corpus: "c", Split: "train", Rows: 5}
	b := shards.ShardInfo{Path: "c/train/part-00000-of-00002.parquet", Corpus: "c", Split: "train", Rows: 7}
	d := shards.ShardInfo{Path: "c/dev/part-00000-of-00001.parquet", Corpus: "c", Split: "dev", Rows: 2}
	m.Add(a, b, d)
	if got := m.Splits["c/train"]; got.Rows != 12 || !slices.Equal(got.Shards, []string{b.Path, a.Path}) {
		t.Errorf("c/train = %+v", got)
	}
	a.Rows = 6
	m.Add(a) // replaces the entry with the same path
	if got := m.Splits["c/train"]; got.Rows != 13 || len(m.Files) != 3 {
		t.Errorf("after replacing a shard c/train = %+v, %d files", got, len(m.Files))
	}
	infos, err := m.Shards("c", "train")
	if err != nil || len(infos) != 2 || infos[0] != b || infos[1] != a {
		t.Errorf("Shards(c, train) = %v, %v", infos, err)
	}
	m.AddSplit("c", "train") // now empty
	if got := m.Splits["c/train"]; got.Rows != 0 || len(got.Shards) != 0 || len(m.Files) != 1 {
		t.Errorf("after AddSplit with no shards c/train = %+v, %d files", got, len(m.Files))
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddSplit with a shard of another split did not panic")
		}
	}()
	m.AddSplit("c", "test", d)
}

func TestManifestVerifyFindsMismatches(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, root string, m *shards.Manifest)
		is     error
		file   string // the error names it
	}{
		{"flipped byte", func(t *testing.T, root string, m *shards.Manifest) {
			flipByte(t, filepath.Join(root, "sts/train/part-00001-of-00003.parquet"))
		}, shards.ErrChecksum, "part-00001-of-00003.parquet"},
		{"flipped byte, a manifest without BLAKE3 sums", func(t *testing.T, root string, m *shards.Manifest) {
			// An older manifest: the sha256 is checked.
			for i := range m.Files {
				m.Files[i].BLAKE3 = ""
			}
			flipByte(t, filepath.Join(root, "sts/train/part-00001-of-00003.parquet"))
		}, shards.ErrChecksum, "part-00001-of-00003.parquet"},
		{"BLAKE3 of other bytes", func(t *testing.T, root string, m *shards.Manifest) {
			// The file matches its sha256, not its BLAKE3: the BLAKE3 is
			// the one checked where the manifest has it.
			for i := range m.Files {
				if m.Files[i].Split == "dev" {
					m.Files[i].BLAKE3 = strings.Repeat("0", 64)
				}
			}
		}, shards.ErrChecksum, "part-00000-of-00001.parquet"},
		{"truncated", func(t *testing.T, root string, m *shards.Manifest) {
			p := filepath.Join(root, "sts/dev/part-00000-of-00001.parquet")
			data := readBytes(t, p)
			os.WriteFile(p, data[:len(data)-1], 0o644)
		}, shards.ErrChecksum, "part-00000-of-00001.parquet"},
		{"missing shard", func(t *testing.T, root string, m *shards.Manifest) {
			os.Remove(filepath.Join(root, "sts/train/part-00002-of-00003.parquet"))
		}, os.ErrNotExist, "part-00002-of-00003.parquet"},
		{"row count", func(t *testing.T, root string, m *shards.Manifest) {
			// A manifest whose row count disagrees with a consistent file.
			for i := range m.Files {
				if m.Files[i].Split == "dev" {
					m.Files[i].Rows++
				}
			}
			s := m.Splits["sts/dev"]
			s.Rows++
			m.Splits["sts/dev"] = s
		}, shards.ErrRowCount, "part-00000-of-00001.parquet"},
		{"vocabulary", func(t *testing.T, root string, m *shards.Manifest) {
			os.WriteFile(filepath.Join(root, "vocab.txt"), []byte("the\na\nor\n"), 0o644)
		}, shards.ErrChecksum, "vocab.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := buildRun(t, root)
			tt.change(t, root, m)
			err := m.Verify(root)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Verify = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q does not name %s", err, tt.file)
			}
		})
	}
}

// flipByte changes a bit of the middle byte of the file p.
func flipByte(t *testing.T, p string) {
	data := readBytes(t, p)
	data[len(data)/2] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriterSums checks each shard's sha256 and BLAKE3 against the file's
// bytes, hashed here on their own.
func TestWriterSums(t *testing.T) {
	root := t.TempDir()
	m := buildRun(t, root)
	if len(m.Files) < 3 {
		t.Fatalf("%d shards, want several", len(m.Files))
	}
	for _, f := range m.Files {
		data := readBytes(t, filepath.Join(root, filepath.FromSlash(f.Path)))
		sha, b3 := sha256.Sum256(data), blake3.Sum256(data)
		if got, want := f.SHA256, hex.EncodeToString(sha[:]); got != want {
			t.Errorf("%s: sha256 %s, the file's is %s", f.Path, got, want)
		}
		if got, want := f.BLAKE3, hex.EncodeToString(b3[:]); got != want {
			t.Errorf("%s: BLAKE3 %s, the file's is %s", f.Path, got, want)
		}
	}
	if err := m.Verify(root); err != nil {
		t.Fatal(err)
	}
}

func TestManifestValidate(t *testing.T) {
	good := func() *shards.Manifest {
		m := shards.NewManifest(nil)
		m.Add(shards.ShardInfo{Path: "c/s/part-00000-of-00001.parquet", Corpus: "c", Split: "s", Rows: 3})
		return m
	}
	tests := []struct {
		name   string
		change func(m *shards.Manifest)
		is     error
	}{
		{"newer schema", func(m *shards.Manifest) { m.SchemaVersion = shards.SchemaVersion + 1 }, shards.ErrSchemaVersion},
		{"no schema", func(m *shards.Manifest) { m.SchemaVersion = 0 }, shards.ErrManifest},
		{"path outside root", func(m *shards.Manifest) {
			m.Files[0].Path = "../elsewhere.parquet"
			m.Splits["c/s"] = shards.SplitInfo{Corpus: "c", Split: "s", Rows: 3, Shards: []string{"../elsewhere.parquet"}}
		}, shards.ErrManifest},
		{"absolute path", func(m *shards.Manifest) { m.Vocabulary = &shards.Artifact{Path: "/etc/passwd"} }, shards.ErrManifest},
		{"rows do not add up", func(m *shards.Manifest) {
			s := m.Splits["c/s"]
			s.Rows = 4
			m.Splits["c/s"] = s
		}, shards.ErrManifest},
		{"unlisted split", func(m *shards.Manifest) { delete(m.Splits, "c/s") }, shards.ErrManifest},
		{"unknown shard", func(m *shards.Manifest) {
			s := m.Splits["c/s"]
			s.Shards = append(s.Shards, "c/s/part-00009.parquet")
			m.Splits["c/s"] = s
		}, shards.ErrManifest},
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("Validate of a good manifest: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.change(m)
			if err := m.Validate(); !errors.Is(err, tt.is) {
				t.Errorf("Validate = %v, want %v", err, tt.is)
			}
			root := t.TempDir()
			if err := shards.WriteManifest(root, m); err == nil {
				t.Error("WriteManifest wrote an invalid manifest")
			}
		})
	}
}

func TestReadManifestErrors(t *testing.T) {
	root := t.TempDir()
	if _, err := shards.ReadManifest(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadManifest of a directory without one = %v, want ErrNotExist", err)
	}
	name := filepath.Join(root, shards.ManifestName)
	os.WriteFile(name, []byte(`{"schema_version": 1, "files": [`), 0o644)
	if _, err := shards.ReadManifest(root); !errors.Is(err, shards.ErrManifest) || !strings.Contains(err.Error(), name) {
		t.Errorf("ReadManifest of broken JSON = %v, want ErrManifest naming the file", err)
	}
	os.WriteFile(name, []byte(`{"schema_version": 2, "splits": {}, "files": []}`), 0o644)
	if _, err := shards.ReadManifest(root); !errors.Is(err, shards.ErrSchemaVersion) {
		t.Errorf("ReadManifest of a newer manifest = %v, want ErrSchemaVersion", err)
	}
}

func TestWriteManifestLeavesNoTemporary(t *testing.T) {
	root := t.TempDir()
	for range 2 { // the second write replaces the first
		if err := shards.WriteManifest(root, shards.NewManifest([]string{"x"})); err != nil {
			t.Fatal(err)
		}
	}
	if got := glob(t, root, "*"); !slices.Equal(got, []string{shards.ManifestName}) {
		t.Errorf("root holds %v", got)
	}
	if got := glob(t, root, ".*"); len(got) != 0 {
		t.Errorf("temporaries remain: %v", got)
	}
}

func TestBuildInfo(t *testing.T) {
	// A test binary records no module versions; a program does.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go command is not in PATH to build a program")
	}
	out, err := exec.Command(gobin, "run", "./testdata/buildinfo").Output()
	if err != nil {
		t.Fatalf("go run ./testdata/buildinfo: %v", err)
	}
	var got struct {
		Version string
		Deps    map[string]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Version == "" {
		t.Error("empty version")
	}
	if v := got.Deps["github.com/parquet-go/parquet-go"]; v != "v0.32.0" {
		t.Errorf("parquet-go version %q, want v0.32.0 (deps %v)", v, got.Deps)
	}
	for mod := range got.Deps {
		if strings.Contains(mod, "klauspost") {
			t.Errorf("BuildInfo lists %s, which is not a key module", mod)
		}
	}
}

// BenchmarkVerifyShard verifies the shards of a split by their BLAKE3 and,
// as a manifest without BLAKE3 sums has them checked, by their sha256
// (b.SetBytes: MB/s of shard bytes): shard/ one shard after another on one
// goroutine (VerifyShard), manifest/ all of them as Manifest.Verify does,
// on every core.
func BenchmarkVerifyShard(b *testing.B) {
	root := b.TempDir()
	infos := writeSplit(b, root, "c", "train", shards.WriterOptions{MaxRows: 5_000}, testRows(7, 60_000))
	var size int64
	for _, f := range infos {
		size += f.Bytes
	}
	for _, c := range []struct {
		name  string
		blake bool
	}{{"blake3", true}, {"sha256", false}} {
		fs := slices.Clone(infos)
		if !c.blake {
			for i := range fs {
				fs[i].BLAKE3 = ""
			}
		}
		m := shards.NewManifest(nil)
		m.AddSplit("c", "train", fs...)
		b.Run("shard/"+c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, f := range fs {
					if err := shards.VerifyShard(root, f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("manifest/"+c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				if err := m.Verify(root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
