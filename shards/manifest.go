package shards

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/zeebo/blake3"

	"github.com/parastream/parastream/internal/atomicfile"
)

// ManifestName is the manifest's file name, directly under the root.
const ManifestName = "manifest.json"

// Manifest describes a directory of shards: what each split holds, the
// checksum of every file, the artifacts of later stages and what produced
// them. It carries no timestamps and WriteManifest orders everything, so the
// same run over the same input gives a byte-identical manifest.
//
// A consumer trusts the manifest, and checks it: ReadManifest checks that it
// is consistent, Verify that the files are the ones it describes.
type Manifest struct {
	// SchemaVersion is the Row schema version of every shard.
	SchemaVersion int `json:"schema_version"`
	// CreatedBy says what produced the shards.
	CreatedBy CreatedBy `json:"created_by"`
	// Splits maps SplitKey(corpus, split) to the split's rows and shards.
	Splits map[string]SplitInfo `json:"splits"`
	// Files lists every shard, sorted by path.
	Files []ShardInfo `json:"files"`
	// Vocabulary is the featurize vocabulary, once written.
	Vocabulary *Artifact `json:"vocabulary,omitempty"`
	// Topics is the fitted NMF topic model, once written.
	Topics *Artifact `json:"topics,omitempty"`
	// Featurize is the record of how the vocabulary and topics were made
	// (featurize.json), once written.
	Featurize *Artifact `json:"featurize,omitempty"`
	// Rejects lists the rejects files, with the records each holds.
	Rejects []Artifact `json:"rejects,omitempty"`
	// Stats holds counters of the run (records read, filtered by rule, ...).
	Stats map[string]int64 `json:"stats,omitempty"`
}

// CreatedBy records the command and versions that produced a manifest.
type CreatedBy struct {
	// Command is the command line, program name first.
	Command []string `json:"command"`
	// Version is the version of the program (its module version, with the
	// VCS revision where the build recorded one).
	Version string `json:"version"`
	// GoVersion is the Go toolchain the program was built with.
	GoVersion string `json:"go_version"`
	// Dependencies maps the key modules linked into the program to their
	// versions; see BuildInfo.
	Dependencies map[string]string `json:"dependencies"`
}

// SplitInfo is one split of one corpus in a manifest.
type SplitInfo struct {
	Corpus string `json:"corpus"`
	Split  string `json:"split"`
	// Rows is the sum of the rows of the split's shards.
	Rows int64 `json:"rows"`
	// Shards lists the paths of the split's shards, in reading order.
	Shards []string `json:"shards"`
}

// Artifact is a file that is not a shard: a vocabulary, a topic model, a
// rejects file. Path is relative to the root, with forward slashes.
type Artifact struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Bytes is the size of the file.
	Bytes int64 `json:"bytes"`
	// Records counts what the file holds where that means something (the
	// records of a rejects file, the words of a vocabulary).
	Records int64 `json:"records,omitempty"`
}

// SplitKey is the key of a split in Manifest.Splits: "corpus/split".
func SplitKey(corpus, split string) string { return corpus + "/" + split }

// NewManifest returns an empty manifest of the current SchemaVersion,
// created by the given command line and the running program's versions.
func NewManifest(command []string) *Manifest {
	version, deps := BuildInfo()
	return &Manifest{
		SchemaVersion: SchemaVersion,
		CreatedBy: CreatedBy{
			Command:      slices.Clone(command),
			Version:      version,
			GoVersion:    runtime.Version(),
			Dependencies: deps,
		},
		Splits: map[string]SplitInfo{},
	}
}

// Add records shards, replacing any entry with the same path, and updates
// the row counts and shard lists of their splits.
func (m *Manifest) Add(infos ...ShardInfo) {
	touched := map[string]bool{}
	for _, info := range infos {
		i := slices.IndexFunc(m.Files, func(f ShardInfo) bool { return f.Path == info.Path })
		if i >= 0 {
			touched[SplitKey(m.Files[i].Corpus, m.Files[i].Split)] = true
			m.Files[i] = info
		} else {
			m.Files = append(m.Files, info)
		}
		touched[SplitKey(info.Corpus, info.Split)] = true
	}
	m.sortFiles()
	for key := range touched {
		m.updateSplit(key)
	}
}

// AddSplit records the complete set of shards of one split, as a Writer's
// Close returns them, replacing whatever the manifest held for that split.
// Unlike Add it records a split even when it has no shards, so that an
// empty split reads as empty rather than missing. It panics if a shard
// belongs to another split.
func (m *Manifest) AddSplit(corpus, split string, infos ...ShardInfo) {
	key := SplitKey(corpus, split)
	for _, info := range infos {
		if info.Corpus != corpus || info.Split != split {
			panic(fmt.Sprintf("shards: AddSplit(%q, %q) given shard %s of %s", corpus, split, info.Path, SplitKey(info.Corpus, info.Split)))
		}
	}
	m.Files = slices.DeleteFunc(m.Files, func(f ShardInfo) bool { return SplitKey(f.Corpus, f.Split) == key })
	m.Files = append(m.Files, infos...)
	m.sortFiles()
	if m.Splits == nil {
		m.Splits = map[string]SplitInfo{}
	}
	m.Splits[key] = SplitInfo{Corpus: corpus, Split: split, Shards: []string{}}
	m.updateSplit(key)
}

// DropCorpus removes a corpus's splits, shards, rejects file and stats
// (keys "<corpus>/...") from the manifest, before a new run's replace them.
func (m *Manifest) DropCorpus(corpus string) {
	for k, sp := range m.Splits {
		if sp.Corpus == corpus {
			delete(m.Splits, k)
		}
	}
	m.Files = slices.DeleteFunc(m.Files, func(f ShardInfo) bool { return f.Corpus == corpus })
	m.Rejects = slices.DeleteFunc(m.Rejects, func(a Artifact) bool { return LogicalPath(a.Path) == RejectsPath(corpus) })
	for k := range m.Stats {
		if strings.HasPrefix(k, corpus+"/") {
			delete(m.Stats, k)
		}
	}
}

func (m *Manifest) sortFiles() {
	slices.SortFunc(m.Files, func(a, b ShardInfo) int { return strings.Compare(a.Path, b.Path) })
}

// updateSplit recomputes one split's entry from Files.
func (m *Manifest) updateSplit(key string) {
	if m.Splits == nil {
		m.Splits = map[string]SplitInfo{}
	}
	s, ok := m.Splits[key]
	s.Rows, s.Shards = 0, []string{}
	for _, f := range m.Files {
		if SplitKey(f.Corpus, f.Split) == key {
			s.Corpus, s.Split = f.Corpus, f.Split
			s.Rows += f.Rows
			s.Shards = append(s.Shards, f.Path)
			ok = true
		}
	}
	if ok {
		m.Splits[key] = s
	}
}

// Shards returns the shards of one split in reading order. A split the
// manifest does not list is an error wrapping ErrManifest.
func (m *Manifest) Shards(corpus, split string) ([]ShardInfo, error) {
	key := SplitKey(corpus, split)
	s, ok := m.Splits[key]
	if !ok {
		return nil, fmt.Errorf("%w: no split %s (the manifest lists %s)", ErrManifest, key, strings.Join(slices.Sorted(maps.Keys(m.Splits)), ", "))
	}
	infos := make([]ShardInfo, 0, len(s.Shards))
	for _, p := range s.Shards {
		i := slices.IndexFunc(m.Files, func(f ShardInfo) bool { return f.Path == p })
		if i < 0 {
			return nil, fmt.Errorf("%w: split %s lists shard %s, which is not among the files", ErrManifest, key, p)
		}
		infos = append(infos, m.Files[i])
	}
	return infos, nil
}

// Validate checks that the manifest is consistent in itself, without looking
// at the files: a supported schema version, clean relative paths, each file
// in exactly the split it names, and row counts that add up. Errors wrap
// ErrManifest or ErrSchemaVersion.
func (m *Manifest) Validate() error {
	switch {
	case m.SchemaVersion < 1:
		return fmt.Errorf("%w: schema_version %d", ErrManifest, m.SchemaVersion)
	case m.SchemaVersion > SchemaVersion:
		return fmt.Errorf("%w: the manifest has version %d, this program reads up to %d", ErrSchemaVersion, m.SchemaVersion, SchemaVersion)
	}
	var errs []error
	files := map[string]ShardInfo{}
	for _, f := range m.Files {
		if _, err := localPath(".", f.Path); err != nil {
			errs = append(errs, err)
		}
		if _, dup := files[f.Path]; dup {
			errs = append(errs, fmt.Errorf("%w: file %s listed twice", ErrManifest, f.Path))
		}
		files[f.Path] = f
		if _, ok := m.Splits[SplitKey(f.Corpus, f.Split)]; !ok {
			errs = append(errs, fmt.Errorf("%w: file %s belongs to split %s, which is not listed", ErrManifest, f.Path, SplitKey(f.Corpus, f.Split)))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(m.Splits)) {
		s := m.Splits[key]
		if key != SplitKey(s.Corpus, s.Split) {
			errs = append(errs, fmt.Errorf("%w: split %s is keyed %q", ErrManifest, SplitKey(s.Corpus, s.Split), key))
		}
		var rows int64
		for _, p := range s.Shards {
			f, ok := files[p]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%w: split %s lists shard %s, which is not among the files", ErrManifest, key, p))
			case SplitKey(f.Corpus, f.Split) != key:
				errs = append(errs, fmt.Errorf("%w: split %s lists shard %s of split %s", ErrManifest, key, p, SplitKey(f.Corpus, f.Split)))
			}
			rows += f.Rows
		}
		if rows != s.Rows {
			errs = append(errs, fmt.Errorf("%w: split %s has %d rows, its shards add up to %d", ErrManifest, key, s.Rows, rows))
		}
	}
	for _, a := range m.artifacts() {
		if _, err := localPath(".", a.Path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manifest) artifacts() []Artifact {
	var as []Artifact
	if m.Vocabulary != nil {
		as = append(as, *m.Vocabulary)
	}
	if m.Topics != nil {
		as = append(as, *m.Topics)
	}
	if m.Featurize != nil {
		as = append(as, *m.Featurize)
	}
	return append(as, m.Rejects...)
}

// Verify checks the files under root against the manifest: every shard's
// size and sha256 (reading it whole) and its row count (from its footer),
// and the size and sha256 of every artifact. It reports every mismatch,
// each naming its file and wrapping ErrChecksum, ErrRowCount or the error
// that kept the file from being read.
func (m *Manifest) Verify(root string) error {
	if err := m.Validate(); err != nil {
		return err
	}
	// Files are checked on one goroutine per core (hashing is the cost);
	// errors are reported in the manifest's order.
	shardErrs := make([]error, len(m.Files))
	arts := m.artifacts()
	artErrs := make([]error, len(arts))
	var wg sync.WaitGroup
	next := make(chan func())
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for job := range next {
				job()
			}
		})
	}
	for i, f := range m.Files {
		next <- func() { shardErrs[i] = VerifyShard(root, f) }
	}
	for i, a := range arts {
		next <- func() {
			name, _ := localPath(root, a.Path)
			artErrs[i] = checkFile(name, a.Bytes, a.SHA256)
		}
	}
	close(next)
	wg.Wait()
	return errors.Join(append(shardErrs, artErrs...)...)
}

// VerifyArtifacts checks the size and sha256 of every artifact (vocabulary,
// topics, rejects files): Verify less the shards, for a caller that checks
// those one at a time with VerifyShard.
func (m *Manifest) VerifyArtifacts(root string) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var errs []error
	for _, a := range m.artifacts() {
		name, _ := localPath(root, a.Path)
		errs = append(errs, checkFile(name, a.Bytes, a.SHA256))
	}
	return errors.Join(errs...)
}

// VerifyShard checks one shard of a manifest under root: its size, its
// BLAKE3 where the manifest has one and else its sha256 (reading it whole),
// and its row count (from its footer), as Verify does for each. The BLAKE3
// is checked at about 1.7 times sha256's speed here (BenchmarkVerifyShard),
// with the same 128-bit collision resistance.
func VerifyShard(root string, f ShardInfo) error {
	name, _ := localPath(root, f.Path)
	file, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", name, err)
	}
	defer file.Close()
	algo, want, h := "sha256", f.SHA256, hash.Hash(sha256.New())
	if f.BLAKE3 != "" {
		algo, want, h = "BLAKE3", f.BLAKE3, blake3.New()
	}
	if err := checkSum(file, h, algo, f.Bytes, want); err != nil {
		return err
	}
	rows, err := footerRowsAt(file, f.Bytes)
	if err != nil {
		return fmt.Errorf("verifying shard %s: %w", name, err)
	}
	if rows != f.Rows {
		return fmt.Errorf("verifying shard %s: %w: %d rows, the manifest says %d", name, ErrRowCount, rows, f.Rows)
	}
	return nil
}

// footerLen is the footer length that a Parquet file of size bytes
// declares in its last 8 bytes, tail.
func footerLen(tail []byte, size int64) (int64, error) {
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:8]) != "PAR1" || n > size-12 {
		return 0, fmt.Errorf("malformed Parquet file: no footer (a footer of %d bytes, magic %q)", n, tail[4:8])
	}
	return n, nil
}

// footerRowsAt reads the row count of a Parquet file of size bytes, read
// through r, from its footer: the FileMetaData's num_rows field alone is
// decoded (the schema and the row groups are skipped over), a small
// fraction of what opening the file with parquet-go costs.
func footerRowsAt(r io.ReaderAt, size int64) (int64, error) {
	if size < 12 {
		return 0, fmt.Errorf("malformed Parquet file: %d bytes", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	n, err := footerLen(tail[:], size)
	if err != nil {
		return 0, err
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return 0, err
	}
	return parseFooterRows(footer)
}

// parseFooterRows decodes the num_rows field of a thrift-encoded
// FileMetaData.
func parseFooterRows(footer []byte) (rows int64, err error) {
	// The thrift decoder may panic on malformed input: a bad file is an
	// error here.
	defer func() {
		if p := recover(); p != nil {
			rows, err = 0, fmt.Errorf("malformed Parquet footer: %v", p)
		}
	}()
	var md struct {
		NumRows int64 `thrift:"3,required"`
	}
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &md); err != nil {
		return 0, fmt.Errorf("malformed Parquet footer: %w", err)
	}
	if md.NumRows < 0 {
		return 0, fmt.Errorf("malformed Parquet footer: %d rows", md.NumRows)
	}
	return md.NumRows, nil
}

// checkFile compares a file's size and sha256 with the expected ones.
func checkFile(name string, size int64, sum string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", name, err)
	}
	defer f.Close()
	return checkSum(f, sha256.New(), "sha256", size, sum)
}

// checkSum hashes the file f with h and compares its size and the hex sum
// (of the algorithm algo) with the expected ones.
func checkSum(f *os.File, h hash.Hash, algo string, size int64, sum string) error {
	gotSize, gotSum, err := hashOf(f, h)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", f.Name(), err)
	}
	if gotSize != size {
		return fmt.Errorf("verifying %s: %w: %d bytes, the manifest says %d", f.Name(), ErrChecksum, gotSize, size)
	}
	if gotSum != sum {
		return fmt.Errorf("verifying %s: %w: %s %s, the manifest says %s", f.Name(), ErrChecksum, algo, gotSum, sum)
	}
	return nil
}

// HashFile returns the size and the sha256 (hex) of the file name, as
// manifests (and trainstep's checkpoint sums) list them.
func HashFile(name string) (int64, string, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	return hashOf(f, sha256.New())
}

// hashOf reads r whole, in 64 KiB pieces into a buffer on the stack, and
// returns its size and its hex sum by h.
func hashOf(r io.Reader, h hash.Hash) (int64, string, error) {
	var buf [64 << 10]byte
	var size int64
	for {
		n, err := r.Read(buf[:])
		h.Write(buf[:n])
		size += int64(n)
		if err == io.EOF {
			return size, hex.EncodeToString(h.Sum(nil)), nil
		}
		if err != nil {
			return 0, "", err
		}
	}
}

// NewArtifact describes the file at the path p (relative to root, forward
// slashes), hashing it. records is stored as Artifact.Records.
func NewArtifact(root, p string, records int64) (Artifact, error) {
	name, err := localPath(root, p)
	if err != nil {
		return Artifact{}, err
	}
	size, sum, err := HashFile(name)
	if err != nil {
		return Artifact{}, fmt.Errorf("hashing artifact: %w", err)
	}
	return Artifact{Path: p, SHA256: sum, Bytes: size, Records: records}, nil
}

// marshal renders the manifest deterministically: files and rejects sorted
// by path, map keys sorted (encoding/json does), empty lists as [].
func (m *Manifest) marshal() ([]byte, error) {
	c := *m
	c.Files = slices.Clone(m.Files)
	if c.Files == nil {
		c.Files = []ShardInfo{}
	}
	slices.SortFunc(c.Files, func(a, b ShardInfo) int { return strings.Compare(a.Path, b.Path) })
	c.Rejects = slices.Clone(m.Rejects)
	slices.SortFunc(c.Rejects, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	if c.Splits == nil {
		c.Splits = map[string]SplitInfo{}
	}
	if c.CreatedBy.Command == nil {
		c.CreatedBy.Command = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteManifest writes m as <root>/manifest.json: indented JSON in a fixed
// order, written under a temporary name, synced and renamed over any
// earlier manifest. It refuses an inconsistent manifest (see Validate).
func WriteManifest(root string, m *Manifest) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	data, err := m.marshal()
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	final := filepath.Join(root, ManifestName)
	if err := atomicfile.WriteFile(final, data); err != nil {
		return fmt.Errorf("writing manifest %s: %w", final, err)
	}
	return nil
}

// ReadManifest reads <root>/manifest.json and checks that it is consistent
// (see Validate). Errors name the file.
func ReadManifest(root string) (*Manifest, error) {
	name := filepath.Join(root, ManifestName)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	return parseManifest(name, data)
}

// parseManifest parses and checks the manifest read from name.
func parseManifest(name string, data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w: %w", name, ErrManifest, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", name, err)
	}
	return &m, nil
}

// keyModules returns the dependencies whose versions a manifest records.
func keyModules() []string {
	return []string{
		"github.com/apache/beam/sdks/v2",
		"github.com/segmentio/kafka-go",
		"github.com/parquet-go/parquet-go",
		"github.com/twmb/franz-go",
		"github.com/twmb/franz-go/pkg/kfake",
		"gorgonia.org/gorgonia",
		"gonum.org/v1/gonum",
	}
}

// BuildInfo returns the running program's version and the versions of the
// key modules linked into it (Beam, kafka-go, parquet-go, franz-go and
// kfake, gorgonia, gonum); a module the program does not link is absent.
// The version is the main module's, followed by "+<revision>" (and
// "-dirty") where the build recorded its VCS state; "(devel)" for a local
// build without it, "unknown" where the binary carries no build info.
func BuildInfo() (version string, deps map[string]string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", map[string]string{}
	}
	version = cmp.Or(bi.Main.Version, "(devel)")
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		version += "+" + revision
		if modified == "true" {
			version += "-dirty"
		}
	}
	deps = map[string]string{}
	key := keyModules()
	for _, d := range bi.Deps {
		if !slices.Contains(key, d.Path) {
			continue
		}
		if d.Replace != nil {
			deps[d.Path] = cmp.Or(d.Replace.Version, d.Replace.Path)
		} else {
			deps[d.Path] = d.Version
		}
	}
	return version, deps
}

// SplitRows is the row count of corpus's split in the manifest (0 when it
// lists no such split).
func (m *Manifest) SplitRows(corpus, split string) int64 {
	for _, s := range m.Splits {
		if s.Corpus == corpus && s.Split == split {
			return s.Rows
		}
	}
	return 0
}
