package synth_test

import (
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora/synth"
)

func TestFileNames(t *testing.T) {
	for _, c := range []struct {
		corpus, out, outB string
		codec             synth.Codec
		want              string
	}{
		{"reddit", "RC.zst", "", "", "RC.zst"},
		{"reddit", "RC", "", synth.CodecZstd, "RC.zst"},
		{"reddit", "RC.zst", "", synth.CodecZstd, "RC.zst"},
		{"europarl", "d/europarl-v7.fr-en.en", "", "", "d/europarl-v7.fr-en.en d/europarl-v7.fr-en.fr"},
		{"europarl", "d/europarl-v7.fr-en.en.gz", "", "", "d/europarl-v7.fr-en.en.gz d/europarl-v7.fr-en.fr.gz"},
		{"europarl", "d/ep", "", synth.CodecBzip2, "d/ep.en.bz2 d/ep.fr.bz2"},
		{"europarl", "a.txt", "b.txt", "", "a.txt b.txt"},
		{"simpwiki", "d/normal.aligned", "", "", "d/normal.aligned d/simple.aligned"},
		{"simpwiki", "d/sw", "", synth.CodecGzip, "d/sw.normal.aligned.gz d/sw.simple.aligned.gz"},
	} {
		if got := strings.Join(synth.FileNames(c.corpus, c.out, c.outB, c.codec), " "); got != c.want {
			t.Errorf("%s %s %s %s: %s, want %s", c.corpus, c.out, c.outB, c.codec, got, c.want)
		}
	}
}
