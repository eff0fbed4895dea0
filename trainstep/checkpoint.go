package trainstep

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

// Checkpoint files, inside a checkpoint directory.
const (
	FileModel     = "model.safetensors"     // parameters, F32, by Layout name
	FileOptimizer = "optimizer.safetensors" // optimiser moments
	FileInitial   = "initial.safetensors"   // initial embeddings of λw (layout 2; in FileOptimizer in layout 1)
	FileConfig    = "config.json"           // Config
	FileVocab     = "vocab.txt"             // one word per line, line i is id i (absent without a vocabulary)
	FileTrainer   = "trainer.json"          // TrainerState
	FileRun       = "run.json"              // the training loop's configuration (absent outside a Run)
	FileSums      = "sha256sums.txt"        // the sha256 of every other file, as sha256sum(1) writes them (absent before it was added)
	// DirFeaturize holds the featurize model the data was featurized with
	// (vocab.tsv, topics.safetensors, featurize.json), in checkpoints of a
	// model with a topic context: evaluation computes the topic vectors of
	// new sentences with it.
	DirFeaturize = "featurize"
)

// CheckpointVersion is the layout version written to trainer.json. Layout
// 2 moved the initial embeddings of λw (the state tensors named "init/...")
// out of FileOptimizer into FileInitial, which never changes during a run
// and is linked, not rewritten, from the run's previous checkpoint. Layout 1
// checkpoints are read too.
const CheckpointVersion = 2

// staticFile reports whether name is one of a checkpoint's files that do
// not change during a run (the vocabulary, the initial embeddings, the
// featurize model): a trainer links them from the checkpoint it wrote last
// instead of writing them again.
func staticFile(name string) bool {
	return name == FileVocab || name == FileInitial || strings.HasPrefix(name, DirFeaturize+string(filepath.Separator))
}

// SaveStats says what writing a checkpoint cost.
type SaveStats struct {
	Written, Linked int64 // bytes written, bytes hard-linked from the previous checkpoint
	Elapsed         time.Duration
}

func (s SaveStats) String() string {
	out := fmt.Sprintf("%s written in %.1fs", compute.FormatBytes(s.Written), s.Elapsed.Seconds())
	if s.Linked > 0 {
		out += fmt.Sprintf(", %s unchanged and linked", compute.FormatBytes(s.Linked))
	}
	return out
}

// TrainerState is trainer.json: where training stands.
type TrainerState struct {
	Version int    `json:"version"`
	Step    int64  `json:"step"`
	Epoch   int    `json:"epoch"`
	Backend string `json:"backend"`
	// RNG is the state of the per-step noise generator (PCG, binary).
	RNG []byte `json:"rng"`
	// Position is the loop's stream position (topic, partitions, offsets,
	// epoch), opaque here.
	Position json.RawMessage `json:"position,omitempty"`
}

// Save writes a checkpoint directory dir with the given stream position.
// The directory appears complete or not at all: it is written under a
// temporary sibling name, synced, and renamed; an existing dir is replaced.
func (t *Trainer) Save(dir string, position json.RawMessage) error {
	_, err := t.save(dir, position, nil, nil)
	return err
}

// save writes a checkpoint; run, when set, is written as FileRun, and each
// of extra under its name (relative to dir; "featurize/vocab.tsv").
// Files that do not change during a run (staticFile) are hard-linked from
// the checkpoint this trainer wrote last when it still holds them with the
// same content.
func (t *Trainer) save(dir string, position, run json.RawMessage, extra map[string][]byte) (SaveStats, error) {
	p, err := t.beginSave(dir, position, run, extra)
	if err != nil {
		return SaveStats{}, err
	}
	st, err := p.write()
	if err != nil {
		return st, err
	}
	t.noteSaved(p)
	return st, nil
}

// pendingSave is a checkpoint whose content is taken (beginSave) and whose
// files are not written yet (write): the trainer may step on meanwhile.
type pendingSave struct {
	dir   string
	start time.Time
	snap  compute.Snapshot
	cfg   Config
	vocab []string
	st    TrainerState
	run   json.RawMessage
	extra map[string][]byte
	link  map[string]linkSource
	// sums are the sha256 of the files written, by name (after write).
	sums map[string]string
	// failpoint, when set (by tests: RunConfig's), is called before each
	// file is written, with dir and the file's name; an error fails the
	// write.
	failpoint func(dir, file string) error
}

// beginSave takes a checkpoint's content: the trainer's state, and a
// snapshot of the model's parameters and optimiser state (on a GPU, copies
// to host memory on a second stream, which the next steps do not wait
// for). The files are written by the pendingSave's write, on any
// goroutine; until then the trainer must not begin another save.
func (t *Trainer) beginSave(dir string, position, run json.RawMessage, extra map[string][]byte) (*pendingSave, error) {
	start := time.Now()
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if f, ok := t.model.(compute.Flusher); ok {
		// The rows owed steps of the sparse update take them now, so that
		// the checkpoint holds the dense optimiser's parameters.
		if err := f.Flush(t.step); err != nil {
			return nil, fmt.Errorf("catching up the embedding rows before the checkpoint: %w", err)
		}
	}
	snap, err := compute.TakeSnapshot(t.model)
	if err != nil {
		return nil, fmt.Errorf("saving checkpoint %s: taking the model's snapshot: %w", dir, err)
	}
	p := &pendingSave{dir: dir, start: start, snap: snap, cfg: t.cfg, vocab: t.vocab, run: run, extra: extra,
		st: TrainerState{Version: CheckpointVersion, Step: t.step, Epoch: t.epoch, Backend: t.backend.Name(), RNG: rng, Position: position}}
	// The featurize files may differ between calls (Save after a Run):
	// link them only when their content is the same.
	if t.saved != "" {
		p.link = map[string]linkSource{}
		for name, sum := range t.savedSums {
			if !staticFile(name) {
				continue
			}
			if data, ok := extra[name]; ok && hexSum(data) != sum {
				continue
			}
			p.link[name] = linkSource{path: filepath.Join(t.saved, name), sum: sum}
		}
	}
	return p, nil
}

// noteSaved records p, written, as the checkpoint to link unchanged files
// from.
func (t *Trainer) noteSaved(p *pendingSave) { t.saved, t.savedSums = p.dir, p.sums }

// write waits for the snapshot, writes the checkpoint's files into a
// temporary directory, syncs them and renames it to dir (writeDirAtomic),
// and releases the snapshot. It touches nothing of the trainer: it may run
// on another goroutine while the trainer steps on.
func (p *pendingSave) write() (SaveStats, error) {
	defer p.snap.Release()
	params, full, err := p.snap.Wait()
	if err != nil {
		return SaveStats{}, fmt.Errorf("saving checkpoint %s: copying the model's state out: %w", p.dir, err)
	}
	var state, initial []compute.Tensor
	for _, ts := range full {
		if strings.HasPrefix(ts.Name, "init/") {
			initial = append(initial, ts)
		} else {
			state = append(state, ts)
		}
	}
	meta := map[string]string{"format": "pt", "producer": "parastream trainstep", "encoder": p.cfg.Encoder, "loss": p.cfg.Loss,
		"step": fmt.Sprint(p.st.Step)}
	files := map[string]func(*bufio.Writer) error{
		FileModel: func(b *bufio.Writer) error { return WriteSafetensors(b, params, meta) },
		FileOptimizer: func(b *bufio.Writer) error {
			meta := map[string]string{"optimizer": p.cfg.Optimizer}
			return WriteSafetensors(b, packState(state, meta), meta)
		},
		FileConfig: func(b *bufio.Writer) error { return writeJSON(b, p.cfg) },
		// Compact, so that the position comes back byte for byte.
		FileTrainer: func(b *bufio.Writer) error { return json.NewEncoder(b).Encode(p.st) },
	}
	if initial != nil {
		files[FileInitial] = func(b *bufio.Writer) error { return WriteSafetensors(b, initial, nil) }
	}
	if p.run != nil {
		files[FileRun] = func(b *bufio.Writer) error { _, err := b.Write(p.run); return err }
	}
	for name, data := range p.extra {
		files[name] = func(b *bufio.Writer) error { _, err := b.Write(data); return err }
	}
	if p.vocab != nil {
		files[FileVocab] = func(b *bufio.Writer) error {
			for i, w := range p.vocab {
				if strings.ContainsAny(w, "\n\r") {
					return fmt.Errorf("vocabulary word %d %q contains a line break", i, w)
				}
				b.WriteString(w)
				b.WriteByte('\n')
			}
			return nil
		}
	}
	link := map[string]linkSource{}
	for name, src := range p.link {
		if _, ok := files[name]; ok {
			link[name] = src
		}
	}
	st, sums, err := writeDirAtomic(p.dir, files, link, p.failpoint)
	if err != nil {
		return SaveStats{}, fmt.Errorf("saving checkpoint %s: %w", p.dir, err)
	}
	p.sums = sums
	st.Elapsed = time.Since(p.start)
	return st, nil
}

func writeJSON(b io.Writer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// linkSource is an unchanged file of the previous checkpoint, and its
// sha256 (hex) as that checkpoint's FileSums lists it.
type linkSource struct{ path, sum string }

// hexSum is the sha256 of data in hex, as FileSums lists it.
func hexSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// writeDirAtomic writes files into a temporary sibling of dir, with
// FileSums listing the sha256 of each, and renames it to dir. A file named
// in link is hard-linked from the path given there instead (an unchanged
// file of the previous checkpoint); where the link cannot be made (the
// file is gone, another file system) it is written. failpoint, when not
// nil, is called for each file to write, in name order, before any is
// written (pendingSave.failpoint). The files are written side by side,
// each streamed to its file through its sha256 and synced on a goroutine
// of its own: a checkpoint's two large files (the model, the optimiser's
// moments) take about as long as the larger alone, and no file is built
// in memory first. It returns the sums by file name.
func writeDirAtomic(dir string, files map[string]func(*bufio.Writer) error, link map[string]linkSource, failpoint func(dir, file string) error) (SaveStats, map[string]string, error) {
	var st SaveStats
	sums := make(map[string]string, len(files))
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return st, nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".*.tmp")
	if err != nil {
		return st, nil, err
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return st, nil, err
	}
	var todo []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if sub := filepath.Dir(name); sub != "." {
			if err := os.MkdirAll(filepath.Join(tmp, sub), 0o755); err != nil {
				return st, nil, err
			}
		}
		if src, ok := link[name]; ok {
			if fi, err := os.Stat(src.path); err == nil && fi.Mode().IsRegular() && os.Link(src.path, filepath.Join(tmp, name)) == nil {
				st.Linked += fi.Size()
				sums[name] = src.sum
				continue
			}
		}
		if failpoint != nil {
			if err := failpoint(dir, name); err != nil {
				return st, nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		todo = append(todo, name)
	}
	type written struct {
		size int64
		sum  string
		err  error
	}
	out := make([]written, len(todo))
	var wg sync.WaitGroup
	for i, name := range todo {
		wg.Go(func() {
			out[i].size, out[i].sum, out[i].err = writeHashed(filepath.Join(tmp, name), files[name])
		})
	}
	wg.Wait()
	for i, name := range todo {
		if out[i].err != nil {
			return st, nil, fmt.Errorf("%s: %w", name, out[i].err)
		}
		st.Written += out[i].size
		sums[name] = out[i].sum
	}
	if _, _, err := writeHashed(filepath.Join(tmp, FileSums), func(b *bufio.Writer) error {
		for _, name := range slices.Sorted(maps.Keys(sums)) {
			fmt.Fprintf(b, "%s  %s\n", sums[name], filepath.ToSlash(name))
		}
		return nil
	}); err != nil {
		return st, nil, fmt.Errorf("%s: %w", FileSums, err)
	}
	for name := range files {
		if sub := filepath.Dir(name); sub != "." {
			if err := atomicfile.SyncDir(filepath.Join(tmp, sub)); err != nil {
				return st, nil, err
			}
		}
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return st, nil, err
	}
	if _, err := os.Stat(dir); err == nil {
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return st, nil, err
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return st, nil, err
	}
	return st, sums, atomicfile.SyncDir(parent)
}

// writeHashed creates the file name, writes it with write (through a
// buffer, and through its sha256 as it goes), syncs it, and returns its
// size and its sha256 (hex).
func writeHashed(name string, write func(*bufio.Writer) error) (size int64, sum string, err error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", err
	}
	return fi.Size(), hex.EncodeToString(h.Sum(nil)), nil
}

// verifySums checks the files of checkpoint dir against its FileSums: each
// listed file must be there with that sha256. A checkpoint written before
// FileSums existed has none, and passes.
func verifySums(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, FileSums))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		want, name, ok := strings.Cut(line, "  ")
		if !ok || len(want) != 2*sha256.Size || name == "" || !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("%s line %d: %q is not \"<sha256>  <file>\"", FileSums, i+1, line)
		}
		_, got, err := shards.HashFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%w: %s has sha256 %s, %s says %s", ErrCorrupt, name, got, FileSums, want)
		}
	}
	return nil
}

// Checkpoint is a checkpoint directory read back.
type Checkpoint struct {
	Config    Config
	Vocab     []string // nil when the checkpoint has none
	State     TrainerState
	Params    []compute.Tensor
	Optimizer []compute.Tensor
	Metadata  map[string]string // of model.safetensors
	// ModelOnly is set when the checkpoint's optimiser state was dropped
	// (FileModelOnly): Optimizer holds the initial embeddings at most, and
	// the checkpoint cannot be resumed.
	ModelOnly bool
	// Run is run.json, the run's configuration (ReadRunConfig), when the
	// checkpoint was written by Run.
	Run *RunConfig
}

// Lexicon maps tokens to the ids of the checkpoint's embedding table, as
// featurize mapped the tokens of its training data: the vocabulary's words
// (vocab.txt), then Config.OOVBuckets hashed buckets. A checkpoint without
// buckets (one written before they existed included) maps tokens outside
// the vocabulary to its "<unk>", or leaves them out when the vocabulary has
// none. It fails when the checkpoint has no vocabulary or its words and
// buckets do not fit the embedding table.
func (ck *Checkpoint) Lexicon() (*lexicon.Lexicon, error) {
	if ck.Vocab == nil {
		return nil, fmt.Errorf("the checkpoint holds no vocabulary (%s): tokens cannot be mapped to ids", FileVocab)
	}
	if err := lexicon.CheckHash(ck.Config.OOVHash, ck.Config.OOVBuckets); err != nil {
		return nil, err
	}
	if n := len(ck.Vocab) + ck.Config.OOVBuckets; n > ck.Config.Vocab {
		return nil, fmt.Errorf("the checkpoint's %d words and %d out-of-vocabulary buckets need %d embeddings; it has %d", len(ck.Vocab), ck.Config.OOVBuckets, n, ck.Config.Vocab)
	}
	return lexicon.New(ck.Vocab, ck.Config.OOVBuckets)
}

// ErrCorrupt reports a checkpoint file whose sha256 is not the one its
// FileSums lists.
var ErrCorrupt = errors.New("checkpoint file corrupt")

// ReadCheckpoint reads and checks every file of a checkpoint directory:
// the sha256 of each against FileSums (when the checkpoint has one), then
// their contents.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	if err := verifySums(dir); err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	ck := &Checkpoint{}
	read := func(name string, into func([]byte) error) error {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("reading checkpoint %s: %w", dir, err)
		}
		if err := into(data); err != nil {
			return fmt.Errorf("reading checkpoint %s: %s: %w", dir, name, err)
		}
		return nil
	}
	err := errors.Join(
		read(FileConfig, func(b []byte) error { return json.Unmarshal(b, &ck.Config) }),
		read(FileTrainer, func(b []byte) error { return json.Unmarshal(b, &ck.State) }),
		read(FileModel, func(b []byte) (err error) { ck.Params, ck.Metadata, err = ReadSafetensors(b); return }),
	)
	if ck.ModelOnly = modelOnly(dir); !ck.ModelOnly {
		err = errors.Join(err, read(FileOptimizer, func(b []byte) error {
			ts, meta, err := ReadSafetensors(b)
			if err != nil {
				return err
			}
			ck.Optimizer, err = unpackState(ts, meta)
			return err
		}))
	}
	if err != nil {
		return nil, err
	}
	if ck.State.Version < 1 || ck.State.Version > CheckpointVersion {
		return nil, fmt.Errorf("reading checkpoint %s: layout version %d: this build reads versions 1 to %d (a newer parastream wrote it: use that one)", dir, ck.State.Version, CheckpointVersion)
	}
	if ck.State.Version >= 2 {
		err := read(FileInitial, func(b []byte) error {
			ts, _, err := ReadSafetensors(b)
			ck.Optimizer = append(ck.Optimizer, ts...)
			return err
		})
		// Absent without λw: there are no initial embeddings to keep.
		if err != nil && (ck.Config.LambdaW > 0 || !errors.Is(err, os.ErrNotExist)) {
			return nil, err
		}
	}
	if err := ck.Config.Validate(); err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	if err := compute.CheckParams(ck.Config, ck.Params); err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	if ck.Run, err = ReadRunConfig(dir); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, FileVocab)); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		ck.Vocab = []string{}
		for sc.Scan() {
			ck.Vocab = append(ck.Vocab, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading checkpoint %s: %s: %w", dir, FileVocab, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return ck, nil
}

// Resume rebuilds a trainer from a checkpoint directory: the next Step
// continues exactly as the saved trainer's next Step would have. It returns
// the saved stream position. backend nil means the gorgonia CPU backend.
func Resume(dir string, backend compute.Backend) (*Trainer, json.RawMessage, error) {
	m, ck, err := LoadModel(dir, backend)
	if err != nil {
		return nil, nil, err
	}
	if ck.ModelOnly {
		m.Close()
		return nil, nil, errModelOnly(dir)
	}
	if err := m.SetState(ck.Optimizer); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("resuming %s: %w", dir, err)
	}
	if backend == nil {
		backend = cpu.New()
	}
	t := &Trainer{cfg: ck.Config, backend: backend, model: m, step: ck.State.Step, epoch: ck.State.Epoch, vocab: ck.Vocab,
		pcg: &rand.PCG{}}
	if err := t.pcg.UnmarshalBinary(ck.State.RNG); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("resuming %s: rng state: %w", dir, err)
	}
	t.rng = rand.New(t.pcg)
	return t, ck.State.Position, nil
}

// LoadModel loads a checkpoint's model for inference (evalsink): the model,
// its configuration and vocabulary. backend nil means the gorgonia CPU
// backend.
func LoadModel(dir string, backend compute.Backend) (compute.Model, *Checkpoint, error) {
	ck, err := ReadCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	if backend == nil {
		backend = cpu.New()
	}
	m, err := backend.Build(ck.Config, ck.Params)
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	return m, ck, nil
}

// ReadFeaturizeFiles reads the featurize model saved in checkpoint dir
// (DirFeaturize), by file name; nil when it has none.
func ReadFeaturizeFiles(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(filepath.Join(dir, DirFeaturize))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, DirFeaturize, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = data
	}
	return out, nil
}
