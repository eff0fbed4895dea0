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
	return chunkLines(ctx, r, linesChunk, func(lines []string) error {
		texts := make([][]string, len(lines))
		for i, line := range lines {
			texts[i] = tokenize(line)
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
		return nil
	})
}

// chunkLines reads r's lines and hands them to do in order, size at a
// time (the last chunk fewer), stopping at the first error or when ctx is
// done; it returns the number of lines read.
func chunkLines(ctx context.Context, r io.Reader, size int, do func(lines []string) error) (int, error) {
	var lines []string
	n := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		lines = append(lines, sc.Text())
		n++
		if len(lines) == size {
			if err := do(lines); err != nil {
				return n, err
			}
			lines = lines[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("reading the lines: %w", err)
	}
	if len(lines) == 0 {
		return n, nil
	}
	return n, do(lines)
}
