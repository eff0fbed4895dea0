package evalsink

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteVector writes one sentence's vector to w: as a line of
// space-separated numbers (format "text"), or as a JSON line with the
// sentence (format "json").
func WriteVector(w io.Writer, format, text string, vec []float32) error {
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
