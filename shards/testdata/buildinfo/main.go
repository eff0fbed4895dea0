// Command buildinfo prints shards.BuildInfo as JSON. The shards tests run it:
// a test binary carries no module versions, a program does.
package main

import (
	"encoding/json"
	"os"

	"github.com/parastream/parastream/shards"
)

func main() {
	version, deps := shards.BuildInfo()
	json.NewEncoder(os.Stdout).Encode(map[string]any{"version": version, "deps": deps})
}
