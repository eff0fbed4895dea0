package trainstep

import (
	"encoding/json"
	"fmt"
	"io"
)

// ExportSafetensors writes every parameter of checkpoint ck, read from
// dir, as one safetensors file whose metadata holds the configuration, the
// vocabulary, the step and where it came from (`parastream export
// --format safetensors`): the model, without the optimiser, for another
// framework to load.
func ExportSafetensors(w io.Writer, ck *Checkpoint, dir string) error {
	cfg, err := json.Marshal(ck.Config)
	if err != nil {
		return err
	}
	meta := map[string]string{"format": "pt", "producer": "parastream export", "checkpoint": dir, "step": fmt.Sprint(ck.State.Step), "config": string(cfg)}
	if ck.Vocab != nil {
		vocab, err := json.Marshal(ck.Vocab)
		if err != nil {
			return err
		}
		meta["vocab"] = string(vocab)
	}
	return WriteSafetensors(w, ck.Params, meta)
}
