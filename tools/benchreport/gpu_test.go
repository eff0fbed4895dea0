package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGPURows(t *testing.T) {
	none := gpuRows(nil, noGPU)
	if len(none) != 1 || none[0].Parastream != nil || !strings.Contains(none[0].ParastreamNote, "make gpu-bundle") {
		t.Fatalf("without a GPU: %+v", none)
	}
	const out = `{"device": "NVIDIA H100 80GB HBM3", "torch": "2.5.1", "steps": 30, "rows": [
 {"row": "avg/batch100", "parastream": 90000, "torch": {"eager": 30000, "graphs": 60000}, "strongest": "graphs", "ratio": 1.5},
 {"row": "transformer/batch100", "parastream": null, "torch": {}, "strongest": null, "ratio": null}], "failed": []}`
	var gb GPUBench
	if err := json.Unmarshal([]byte(out), &gb); err != nil {
		t.Fatal(err)
	}
	rows := gpuRows(&gb, "")
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	avg := rows[0]
	if avg.Parastream.Median != 90000 || avg.PeerFigure.Median != 60000 || avg.Ratio.Median != 1.5 ||
		!strings.Contains(avg.Peer, "(graphs)") || !strings.Contains(avg.Peer, "[eager graphs]") || !strings.Contains(avg.Input, "H100") {
		t.Fatalf("avg row %+v", avg)
	}
	tf := rows[1]
	if tf.Parastream != nil || tf.PeerFigure != nil || tf.Ratio != nil || tf.ParastreamNote == "" || tf.PeerNote == "" {
		t.Fatalf("a row with no figures must say why: %+v", tf)
	}
}
