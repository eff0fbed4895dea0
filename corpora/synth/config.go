package synth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/parastream/parastream/corpora"
)

// Config configures a generator. The zero value, with Rows set, is a
// useful configuration.
type Config struct {
	// Rows is the number of records to write, malformed ones included
	// (comments for Reddit, line pairs for Europarl and SimpWiki, rules for
	// PPDB, question pairs for Quora; the Quora header is not a row).
	Rows int64
	// Seed selects the corpus: the same seed and Config give the same bytes.
	Seed uint64
	// MalformedRate is the fraction of rows written malformed, each one
	// rejected by the corpus's reader with a known reason. Zero means
	// DefaultMalformedRate; NoMalformed (any negative value) means none.
	MalformedRate float64

	// Era selects the layout of Reddit records: "2005" (18 keys,
	// created_utc an integer), "2012" (21 keys, created_utc a string),
	// "2019" (38 keys), "2020" (47 keys, integers), "2024" (66 to 71 keys,
	// created_utc a float), or "mixed", the default: each record picks one
	// (2024 55%, 2020 20%, 2019 10%, 2012 10%, 2005 5%).
	Era string
	// Start is the time of the first Reddit thread; default 2024-02-01
	// 00:00:00 UTC.
	Start time.Time
	// CommentRate is the mean number of Reddit comments a second; default
	// 12. It sets how far created_utc spreads: 10 million comments span
	// about ten days.
	CommentRate float64
	// MaxActiveThreads bounds the Reddit threads open at once, and so the
	// generator's memory; default 16384. A new thread waits while the
	// bound is reached.
	MaxActiveThreads int

	// PPDBVersion is 2 (six fields with an entailment class, the default)
	// or 1 (five fields and PPDB 1.0's features).
	PPDBVersion int

	// Progress, when set, is called about every 8192 rows with the counts
	// so far. Returning an error stops the generator with that error: the
	// way to cancel it.
	Progress func(Stats) error
}

// The defaults of Config.
const (
	DefaultMalformedRate    = 0.001
	DefaultCommentRate      = 12
	DefaultMaxActiveThreads = 16384
	// NoMalformed as MalformedRate writes no malformed rows.
	NoMalformed = -1
)

// DefaultStart is the default Config.Start: the first second of the
// pushshift dump RC_2024-02.
func DefaultStart() time.Time { return time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC) }

// Eras lists the values Config.Era accepts.
func Eras() []string { return []string{"mixed", "2005", "2012", "2019", "2020", "2024"} }

// Validate reports what is wrong with the configuration, and how to fix it.
func (c Config) Validate() error {
	var errs []error
	if c.Rows < 0 {
		errs = append(errs, fmt.Errorf("rows is %d: give zero or more", c.Rows))
	}
	if c.MalformedRate >= 1 || math.IsNaN(c.MalformedRate) {
		errs = append(errs, fmt.Errorf("malformed rate %g: give a fraction below 1 (0 for the default %g, negative for none)", c.MalformedRate, DefaultMalformedRate))
	}
	if c.Era != "" {
		if _, ok := eraByName(c.Era); !ok && c.Era != "mixed" {
			errs = append(errs, fmt.Errorf("era %q: give one of %v", c.Era, Eras()))
		}
	}
	if c.CommentRate < 0 || math.IsNaN(c.CommentRate) || math.IsInf(c.CommentRate, 0) {
		errs = append(errs, fmt.Errorf("comment rate %g: give a positive number of comments a second (0 for the default %d)", c.CommentRate, DefaultCommentRate))
	}
	if c.MaxActiveThreads < 0 {
		errs = append(errs, fmt.Errorf("max active threads %d: give a positive bound (0 for the default %d)", c.MaxActiveThreads, DefaultMaxActiveThreads))
	}
	if c.PPDBVersion != 0 && c.PPDBVersion != 1 && c.PPDBVersion != 2 {
		errs = append(errs, fmt.Errorf("PPDB version %d: give 1 or 2", c.PPDBVersion))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	switch {
	case c.MalformedRate == 0:
		c.MalformedRate = DefaultMalformedRate
	case c.MalformedRate < 0:
		c.MalformedRate = 0
	}
	if c.Era == "" {
		c.Era = "mixed"
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart()
	}
	if c.CommentRate == 0 {
		c.CommentRate = DefaultCommentRate
	}
	if c.MaxActiveThreads == 0 {
		c.MaxActiveThreads = DefaultMaxActiveThreads
	}
	if c.PPDBVersion == 0 {
		c.PPDBVersion = 2
	}
	return c
}

// Stats reports what a generator wrote.
type Stats struct {
	// Rows is the records written, malformed ones included.
	Rows int64
	// Malformed is the rows written malformed; MalformedByReason splits
	// them by the reason the corpus's reader gives when it rejects them.
	Malformed         int64
	MalformedByReason map[corpora.Reason]int64
	// Bytes is the bytes written, over all the generator's outputs, before
	// any compression.
	Bytes int64
	// Threads is the Reddit threads (submissions) opened; zero for the
	// other corpora.
	Threads int64
}

func (s *Stats) malformed(reason corpora.Reason) {
	s.Malformed++
	if s.MalformedByReason == nil {
		s.MalformedByReason = make(map[corpora.Reason]int64)
	}
	s.MalformedByReason[reason]++
}

// progressEvery is how many rows pass between calls of Config.Progress.
const progressEvery = 8192

// output buffers one generator output and counts its bytes.
type output struct {
	bw  *bufio.Writer
	n   int64
	err error
}

func newOutput(w io.Writer) *output { return &output{bw: bufio.NewWriterSize(w, 256<<10)} }

func (o *output) write(b []byte) {
	if o.err != nil {
		return
	}
	n, err := o.bw.Write(b)
	o.n += int64(n)
	o.err = err
}

func (o *output) flush() error {
	if o.err != nil {
		return o.err
	}
	o.err = o.bw.Flush()
	return o.err
}

// rowLoop drives a generator that writes one row per call of row, with
// the malformed rows picked at cfg.MalformedRate, calling Progress and
// flushing the outputs at the end.
func rowLoop(cfg Config, st *Stats, outs []*output, r *rng, row func(malformed bool) error) error {
	for i := int64(0); i < cfg.Rows; i++ {
		bad := cfg.MalformedRate > 0 && r.chance(cfg.MalformedRate)
		if err := row(bad); err != nil {
			return err
		}
		st.Rows++
		if st.Rows%progressEvery == 0 {
			if err := checkOutputs(cfg, st, outs); err != nil {
				return err
			}
		}
	}
	return finish(st, outs)
}

func checkOutputs(cfg Config, st *Stats, outs []*output) error {
	st.Bytes = 0
	for _, o := range outs {
		if o.err != nil {
			return o.err
		}
		st.Bytes += o.n
	}
	if cfg.Progress != nil {
		return cfg.Progress(*st)
	}
	return nil
}

func finish(st *Stats, outs []*output) error {
	var errs []error
	st.Bytes = 0
	for _, o := range outs {
		errs = append(errs, o.flush())
		st.Bytes += o.n
	}
	return errors.Join(errs...)
}
