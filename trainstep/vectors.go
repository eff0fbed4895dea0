package trainstep

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
)

// Vectors are pretrained word vectors.
type Vectors struct {
	Dim   int
	Words []string
	Data  []float32 // len(Words)·Dim, row i is Words[i]
	index map[string]int
}

// Lookup returns the vector of word, or nil.
func (v *Vectors) Lookup(word string) []float32 {
	if i, ok := v.index[word]; ok {
		return v.Data[i*v.Dim : (i+1)*v.Dim]
	}
	return nil
}

// ErrVectors marks malformed word-vector text.
var ErrVectors = errors.New("malformed word vectors")

// Limits on word-vector input.
const (
	maxVectorDim  = 4096
	maxVectorLine = 1 << 20
)

// ReadVectors reads word vectors in GloVe text format (`word v1 ... vd` per
// line) or word2vec text format (the same after a `count dim` header line),
// telling them apart by the first line. A word may contain spaces (GloVe
// 840B has some): the last d fields are the vector. Blank lines are skipped;
// a repeated word keeps its first vector. Errors name the line.
func ReadVectors(r io.Reader) (*Vectors, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxVectorLine)
	v := &Vectors{index: map[string]int{}}
	want := -1 // word2vec header count
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \r\t")
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if text == "" {
			continue
		}
		fields := strings.Fields(text)
		if line == 1 && len(fields) == 2 {
			count, err1 := strconv.Atoi(fields[0])
			dim, err2 := strconv.Atoi(fields[1])
			if err1 == nil && err2 == nil {
				if count < 0 || dim <= 0 || dim > maxVectorDim {
					return nil, fmt.Errorf("%w: line 1: word2vec header %q: count and dimension out of range (dimension up to %d)", ErrVectors, text, maxVectorDim)
				}
				want, v.Dim = count, dim
				continue
			}
		}
		if v.Dim == 0 {
			// GloVe: the dimension is the count of trailing numeric fields.
			d := 0
			for i := len(fields) - 1; i >= 1; i-- {
				if _, err := strconv.ParseFloat(fields[i], 32); err != nil {
					break
				}
				d++
			}
			if d == 0 || d > maxVectorDim {
				return nil, fmt.Errorf("%w: line %d: %d numeric fields after the word (need 1 to %d)", ErrVectors, line, d, maxVectorDim)
			}
			v.Dim = d
		}
		if len(fields) < v.Dim+1 {
			return nil, fmt.Errorf("%w: line %d: %d fields, need a word and %d numbers", ErrVectors, line, len(fields), v.Dim)
		}
		word := strings.Join(fields[:len(fields)-v.Dim], " ")
		nums := fields[len(fields)-v.Dim:]
		row := make([]float32, v.Dim)
		for i, f := range nums {
			x, err := strconv.ParseFloat(f, 32)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: value %d %q: not a number", ErrVectors, line, i+1, f)
			}
			row[i] = float32(x)
		}
		if _, dup := v.index[word]; dup {
			continue
		}
		v.index[word] = len(v.Words)
		v.Words = append(v.Words, word)
		v.Data = append(v.Data, row...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: after line %d: %v", ErrVectors, line, err)
	}
	if len(v.Words) == 0 {
		return nil, fmt.Errorf("%w: no vectors", ErrVectors)
	}
	if want >= 0 && want != len(v.Words) {
		return nil, fmt.Errorf("%w: word2vec header announces %d vectors, read %d", ErrVectors, want, len(v.Words))
	}
	return v, nil
}

// LoadVectors reads a word-vector file, gunzipping it if it starts with the
// gzip magic.
func LoadVectors(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading vectors %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	v, err := ReadVectors(r)
	if err != nil {
		return nil, fmt.Errorf("reading vectors %s: %w", path, err)
	}
	return v, nil
}

// InitEmbeddings copies the vector of each vocabulary word (vocab[id], or
// its lower case when the exact form is absent) into row id of the
// "embeddings" parameter in params. Rows of words without a vector keep
// their random initialisation; oov counts them.
func InitEmbeddings(params []compute.Tensor, vocab []string, vecs *Vectors) (found, oov int, err error) {
	for _, p := range params {
		if p.Name != compute.ParamEmbeddings {
			continue
		}
		rows, d := p.Shape[0], p.Shape[1]
		if d != vecs.Dim {
			return 0, 0, fmt.Errorf("word vectors have %d dimensions, the model %d", vecs.Dim, d)
		}
		if len(vocab) > rows {
			return 0, 0, fmt.Errorf("vocabulary of %d words, embeddings for %d", len(vocab), rows)
		}
		for id, w := range vocab {
			vec := vecs.Lookup(w)
			if vec == nil {
				vec = vecs.Lookup(strings.ToLower(w))
			}
			if vec == nil {
				oov++
				continue
			}
			copy(p.Data[id*d:(id+1)*d], vec)
			found++
		}
		return found, oov, nil
	}
	return 0, 0, errors.New("no embeddings parameter")
}

// WriteGloVe writes the word embeddings of a checkpoint as GloVe text
// (word v1 ... vd, which ReadVectors reads back): the rows of the
// vocabulary's words only. The out-of-vocabulary buckets' rows after them
// are no words (each is shared by every unseen token of its hash) and are
// left out; WriteSafetensors keeps the whole table.
func WriteGloVe(ctx context.Context, w io.Writer, ck *Checkpoint) error {
	if ck.Vocab == nil {
		return fmt.Errorf("the checkpoint holds no vocabulary (%s): GloVe text needs the words", FileVocab)
	}
	var emb []float32
	for _, p := range ck.Params {
		if p.Name == "embeddings" {
			emb = p.Data
		}
	}
	dim := ck.Config.Dim
	if emb == nil || len(emb) < len(ck.Vocab)*dim {
		return fmt.Errorf("the checkpoint has no embeddings matrix of %d words × %d", len(ck.Vocab), dim)
	}
	buf := make([]byte, 0, 16*dim)
	for i, word := range ck.Vocab {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		buf = append(buf[:0], word...)
		for _, v := range emb[i*dim : (i+1)*dim] {
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(v), 'g', 7, 32)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
