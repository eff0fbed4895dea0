package compute_test

import (
	"fmt"

	"github.com/parastream/parastream/trainstep/compute"
)

// The encoders a Config may name: docs/architecture.md's recipe "Add an
// encoder" adds one to the list (EncoderSpecs), and the tests over
// Encoders() (the gradient checks of trainstep/cpu) then check it.
func ExampleEncoders() {
	fmt.Println(compute.Encoders())
	// Output: [avg lstm lstmavg bilstmavg gran gran2 gran3 gran4 gran5 bigran dan transformer csae]
}

// The encoder list: each entry's name, whether it is recurrent, and the
// backends that build it.
func ExampleEncoderSpecs() {
	for _, s := range compute.EncoderSpecs() {
		fmt.Println(s.Name, s.Recurrent, s.Backends)
	}
	// Output:
	// avg false [cpu cuda]
	// lstm true [cpu cuda]
	// lstmavg true [cpu cuda]
	// bilstmavg true [cpu cuda]
	// gran true [cpu cuda]
	// gran2 true [cpu cuda]
	// gran3 true [cpu cuda]
	// gran4 true [cpu cuda]
	// gran5 true [cpu cuda]
	// bigran true [cpu cuda]
	// dan false [cpu cuda]
	// transformer false [cpu cuda]
	// csae false [cpu]
	// edd true [cpu]
}

// The losses a Config may name: docs/architecture.md's recipe "Add a
// loss" adds one here and a case to trainstep/cpu's TestGradientLosses.
func ExampleLosses() {
	fmt.Println(compute.Losses())
	// Output: [margin hinge softmax sim recon mnrl]
}
