package compute_test

import (
	"fmt"

	"github.com/parastream/parastream/trainstep/compute"
)

// The encoders a Config may name: docs/architecture.md's recipe "Add an
// encoder" adds one here, and the tests over Encoders() (the gradient
// checks of trainstep/cpu) then check it.
func ExampleEncoders() {
	fmt.Println(compute.Encoders())
	// Output: [avg lstm lstmavg bilstmavg gran gran2 gran3 gran4 gran5 bigran dan transformer csae]
}

// The losses a Config may name: docs/architecture.md's recipe "Add a
// loss" adds one here and a case to trainstep/cpu's TestGradientLosses.
func ExampleLosses() {
	fmt.Println(compute.Losses())
	// Output: [margin hinge softmax sim recon]
}
