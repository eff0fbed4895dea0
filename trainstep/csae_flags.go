package trainstep

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// CSAEFlags declares on fs, the train command's flags, the flags of the
// csae encoder (compute's csae.go) writing into cfg, and returns their names
// for the help's groups. A resume refuses them changed (trainFlagPolicy).
func CSAEFlags(fs *flag.FlagSet, cfg *Config) []string {
	fs.Var((*ints)(&cfg.CSAELayers), "csae-layers", "csae: sizes of the layers h_2..h_n above h_1 (whose size is --dim), comma-separated (default: --dim,--dim, three layers)")
	fs.Float64Var(&cfg.CSAELambda, "csae-lambda", 0, "csae: λ, the weight of the context's reconstruction, Eq. 7 (0: 0.5)")
	fs.IntVar(&cfg.CSAETopK, "csae-top-k", 0, "csae: the reconstruction covers the K most frequent ids (0: 5000, or the vocabulary if smaller)")
	fs.BoolVar(&cfg.CSAEZeroContext, "csae-zero-context", false, "csae: feed zero topic vectors (the same model without its context: the ablation); needs --context topics")
	fs.Float64Var(&cfg.CSAEReconWeight, "csae-recon-weight", 0, "csae: add this multiple of the reconstruction loss to a pair loss (margin, sim, ...; 0: none; --loss recon trains the reconstruction alone)")
	return csaeFlagNames()
}

// csaeFlagNames are CSAEFlags' flags.
func csaeFlagNames() []string {
	return []string{"csae-layers", "csae-lambda", "csae-top-k", "csae-zero-context", "csae-recon-weight"}
}

// ints is --csae-layers' value, a comma-separated list of integers: the
// command line's cli.Ints, kept here while this flag is declared in
// trainstep (a library must not import cmd's packages). It goes with this
// file when the flag moves to cmd.
type ints []int

// String implements flag.Value.
func (v *ints) String() string {
	if v == nil {
		return ""
	}
	s := make([]string, len(*v))
	for i, x := range *v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// Set implements flag.Value.
func (v *ints) Set(s string) error {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		x, err := strconv.Atoi(p)
		if err != nil {
			*v = nil
			return fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, x)
	}
	*v = out
	return nil
}
