package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/transforms/text"
)

const embedUsage = "parastream embed --checkpoint DIR [--format text|json] [--lower=true|false] [--start-end=true|false] < sentences.txt"

func runEmbed(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "embed", embedUsage)
	dir := fs.String("checkpoint", "", "checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	format := fs.String("format", "text", "text: one line of space-separated numbers per sentence; json: {\"text\": ..., \"vector\": [...]} lines")
	var lower, startEnd optionalBool
	fs.Var(&lower, "lower", "lowercase before tokenising (default: as the training data was, from the checkpoint)")
	fs.Var(&startEnd, "start-end", "add <s> and </s> around each sentence (default: as the training data was)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else (sentences come on stdin)", cli.ErrUsage)
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("%w: --format %q: give text or json", cli.ErrUsage, *format)
	}
	ckDir, err := trainstep.LatestCheckpoint(*dir)
	if err != nil {
		return err
	}
	emb, ck, err := evalsink.OpenEmbedder(ckDir, topicContext)
	if err != nil {
		return err
	}
	defer emb.Close()
	opts := text.TokenizeOptions{Lower: true}
	if ck.Run != nil {
		opts = text.TokenizeOptions{Lower: ck.Run.Tokenize.Lower, StartEnd: ck.Run.Tokenize.StartEnd}
	}
	lower.apply(&opts.Lower)
	startEnd.apply(&opts.StartEnd)

	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	sentences, err := emb.EmbedLines(ctx, os.Stdin, func(s string) []string { return text.Tokenize(s, opts) },
		func(line string, vec []float32) error { return writeVector(out, *format, line, vec) })
	if err != nil {
		return err
	}
	to := ""
	if b := emb.Lexicon().Buckets(); b > 0 {
		to = fmt.Sprintf(" (mapped to its %d out-of-vocabulary buckets)", b)
	}
	fmt.Fprintf(e.stderr, "embed: %d sentences with %s (%s, dim %d), %d tokens not in its vocabulary%s, %d distinct sentences without a token id (zero vectors)\n",
		sentences, ckDir, ck.Config.Encoder, ck.Config.EmbedDim(), emb.Unknown, to, emb.Empty)
	return nil
}

func writeVector(w io.Writer, format, text string, vec []float32) error {
	if format == "json" {
		b, err := json.Marshal(struct {
			Text   string    `json:"text"`
			Vector []float32 `json:"vector"`
		}{text, vec})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var b strings.Builder
	for i, v := range vec {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(float64(v), 'g', 7, 32))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// optionalBool is a boolean flag that knows whether it was given.
type optionalBool struct {
	set, v bool
}

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.v = true, v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// apply sets *dst when the flag was given.
func (b *optionalBool) apply(dst *bool) {
	if b.set {
		*dst = b.v
	}
}
