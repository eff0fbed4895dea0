package trainflags

import (
	"flag"

	"github.com/parastream/parastream/trainstep"
)

// Policy is policy, for the tests; Refused is flagRefused.
var Policy = policy

// Refused is flagRefused.
const Refused = flagRefused

// DeclareModel is modelFlags and csaeFlags.
var DeclareModel = func(fs *flag.FlagSet, cfg *trainstep.Config) {
	modelFlags(fs, cfg)
	csaeFlags(fs, cfg)
}
