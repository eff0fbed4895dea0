package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// OptionalBool is a boolean flag that knows whether it was given.
type OptionalBool struct {
	set, v bool
}

func (b *OptionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *OptionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.v = true, v
	return nil
}

func (b *OptionalBool) IsBoolFlag() bool { return true }

// Apply sets *dst when the flag was given.
func (b *OptionalBool) Apply(dst *bool) {
	if b.set {
		*dst = b.v
	}
}

// Count is a count (of rows, say) that takes k, M and G suffixes and exponents
// (10M, 2.5k, 1e6).
type Count int64

func (r *Count) String() string { return strconv.FormatInt(int64(*r), 10) }

func (r *Count) Set(s string) error {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "_", ""), ",", "")
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "B"):
		mult, s = 1e9, s[:len(s)-1]
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && mult == 1 && n >= 0 {
		*r = Count(n)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f*mult < 0 || f*mult > 1<<62 || f*mult != float64(int64(f*mult)) {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*r = Count(f * mult)
	return nil
}

// RunnerName is the runner to name in a progress line.
func RunnerName(r string) string {
	if r == "" {
		return "prism, in-process"
	}
	return r
}

// SplitList splits a comma-separated list, leaving out empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// StartCPUProfile profiles the process until stop is called.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// JoinInts is v comma-separated.
func JoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ParseInts reads a comma-separated list of integers.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, p := range SplitList(s) {
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, v)
	}
	return out, nil
}

// Ints is a comma-separated list of integers as a flag value (ParseInts,
// JoinInts), as --csae-layers 200,200.
type Ints []int

// String implements flag.Value.
func (v *Ints) String() string {
	if v == nil {
		return ""
	}
	return JoinInts(*v)
}

// Set implements flag.Value.
func (v *Ints) Set(s string) error {
	ints, err := ParseInts(s)
	*v = ints
	return err
}
