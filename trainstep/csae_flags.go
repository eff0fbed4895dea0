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
	fs.Var((*intList)(&cfg.CSAELayers), "csae-layers", "csae: sizes of the layers h_2..h_n above h_1 (whose size is --dim), comma-separated (default: --dim,--dim, three layers)")
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

// intList is a comma-separated list of integers as a flag.Value.
type intList []int

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(s string) error {
	*l = nil
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("%q is not a layer size: give sizes as 200,200", p)
		}
		*l = append(*l, v)
	}
	return nil
}
