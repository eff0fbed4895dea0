package evalsink

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// linesChunk is how many lines EmbedLines embeds at once.
const linesChunk = 64

// EmbedLines embeds each line of r, tokenised by tokenize, and hands the
// line and its vector to emit in the order read. It returns the number of
// lines embedded.
func (e *Embedder) EmbedLines(ctx context.Context, r io.Reader, tokenize func(string) []string, emit func(line string, vec []float32) error) (int, error) {
	var lines []string
	var texts [][]string
	n := 0
	flush := func() error {
		if len(texts) == 0 {
			return nil
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return err
		}
		for i, line := range lines {
			if err := emit(line, vecs[i]); err != nil {
				return err
			}
		}
		lines, texts = lines[:0], texts[:0]
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		lines = append(lines, sc.Text())
		texts = append(texts, tokenize(sc.Text()))
		n++
		if len(texts) == linesChunk {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("reading the lines: %w", err)
	}
	return n, flush()
}
