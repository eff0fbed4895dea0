package beamfn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/reflectx"

	"github.com/parastream/parastream/internal/beamfn"
)

type item struct{ N int }

type sumFn struct{ total, bundles int }

func (fn *sumFn) StartBundle(context.Context, func(item)) { fn.bundles++ }
func (fn *sumFn) ProcessElement(_ context.Context, x item, emit func(item)) error {
	fn.total += x.N
	emit(item{N: fn.total})
	return nil
}
func (fn *sumFn) FinishBundle(_ context.Context, emit func(item)) error {
	emit(item{N: -fn.total})
	return nil
}
func (fn *sumFn) Teardown() error { fn.total = 0; return nil }

type noLifecycleFn struct{}

func (noLifecycleFn) ProcessElement(s string) error { return fmt.Errorf("%s", s) }

func init() {
	beamfn.DoFn3x1[context.Context, item, func(item), error](&sumFn{},
		beamfn.Method2x0[context.Context, func(item)]("StartBundle"),
		beamfn.Method2x1[context.Context, func(item), error]("FinishBundle"),
		beamfn.Method0x1[error]("Teardown"))
}

// Every method of a registered DoFn is wrapped by a typed caller (none is
// Beam's reflective fallback), and the callers call the DoFn's own methods.
func TestWrapsEveryMethod(t *testing.T) {
	fn := &sumFn{}
	methods, ok := reflectx.WrapMethods(fn)
	if !ok {
		t.Fatal("sumFn has no struct wrapper")
	}
	for _, name := range []string{"ProcessElement", "StartBundle", "FinishBundle", "Teardown"} {
		m := methods[name]
		if m == nil {
			t.Fatalf("%s not wrapped; have %v", name, methods)
		}
		if typ := fmt.Sprintf("%T", m); strings.Contains(typ, "reflectFunc") {
			t.Errorf("%s is wrapped by %s", name, typ)
		}
	}
	var got []int
	emit := func(x item) { got = append(got, x.N) }
	ctx := context.Background()
	methods["StartBundle"].(reflectx.Func2x0).Call2x0(ctx, emit)
	for _, n := range []int{2, 3} {
		if err := methods["ProcessElement"].(reflectx.Func3x1).Call3x1(ctx, item{N: n}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := methods["FinishBundle"].(reflectx.Func2x1).Call2x1(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[2 5 -5]" || fn.bundles != 1 {
		t.Errorf("emitted %v with %d bundles, want [2 5 -5] and 1", got, fn.bundles)
	}
	// The generic Call path too.
	if out := methods["Teardown"].Call(nil); out[0] != nil || fn.total != 0 {
		t.Errorf("Teardown: %v, total %d", out, fn.total)
	}
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("panic %v, want one containing %q", r, want)
		}
	}()
	f()
}

// A lifecycle method left out, a method that does not exist, one with
// another signature, and one named twice are refused when registered.
func TestRefusesIncompleteRegistrations(t *testing.T) {
	mustPanic(t, "has FinishBundle but it was not named", func() {
		beamfn.DoFn3x1[context.Context, item, func(item), error](&sumFn{},
			beamfn.Method2x0[context.Context, func(item)]("StartBundle"),
			beamfn.Method0x1[error]("Teardown"))
	})
	mustPanic(t, "has no method Setup", func() {
		beamfn.DoFn1x1[string, error](&noLifecycleFn{}, beamfn.Method0x0("Setup"))
	})
	mustPanic(t, "registered as func(context.Context, func(beamfn_test.item)) error", func() {
		beamfn.DoFn3x1[context.Context, item, func(item), error](&sumFn{},
			beamfn.Method2x1[context.Context, func(item), error]("StartBundle"))
	})
	mustPanic(t, "named twice", func() {
		beamfn.DoFn3x1[context.Context, item, func(item), error](&sumFn{},
			beamfn.Method0x1[error]("Teardown"), beamfn.Method0x1[error]("Teardown"))
	})
}
