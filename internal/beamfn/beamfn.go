// Package beamfn registers the project's structural DoFns with Beam for
// reflection-free calls of every method, without the code size of Beam's
// register package.
//
// register.DoFn3x1 and its siblings instantiate wrappers for every
// StartBundle, FinishBundle, Setup and Teardown signature Beam allows (up to
// seven parameters each) for every DoFn they register: with the project's
// DoFns that was about 22 MB of machine code and as much again of function
// tables, a third of the binary (issue 17). This package registers what
// Beam's exec reads (the DoFn's type, the struct types of its
// ProcessElement's parameters, a struct wrapper giving a typed caller for
// each method) and instantiates callers only for the signatures the DoFns
// really have: the lifecycle methods are named at registration, each with
// its signature, and a DoFn with a lifecycle method that is not named is
// refused when it is registered (at init), so no method silently falls back
// to Beam's reflective calls.
//
// Emitters, iterators, combiners and plain functions still use Beam's
// register package: their generic code is small.
//
// The package also names the namespace of the project's Beam counters
// (CounterNamespace), which the DoFns of transforms and featurize report in.
package beamfn

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx/schema"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/reflectx"
)

// Method is a DoFn method other than ProcessElement, with its signature:
// made by Method0x0, Method0x1, Method1x1, Method2x0, Method2x1, Method3x0 or
// Method3x1.
type Method struct {
	name string
	typ  reflect.Type // the bound method's type
	wrap func(bound any) reflectx.Func
}

func method[F any](name string, wrap func(F) reflectx.Func) Method {
	return Method{name: name, typ: reflect.TypeFor[F](), wrap: func(f any) reflectx.Func { return wrap(f.(F)) }}
}

// Method0x0 is a method with no parameters and no results.
func Method0x0(name string) Method {
	return method(name, func(f func()) reflectx.Func { return &call0x0{fn: f} })
}

// Method0x1 is a method with no parameters and one result.
func Method0x1[R0 any](name string) Method {
	return method(name, func(f func() R0) reflectx.Func { return &call0x1[R0]{fn: f} })
}

// Method1x1 is a method with one parameter and one result.
func Method1x1[I0, R0 any](name string) Method {
	return method(name, func(f func(I0) R0) reflectx.Func { return &call1x1[I0, R0]{fn: f} })
}

// Method2x0 is a method with two parameters and no results.
func Method2x0[I0, I1 any](name string) Method {
	return method(name, func(f func(I0, I1)) reflectx.Func { return &call2x0[I0, I1]{fn: f} })
}

// Method2x1 is a method with two parameters and one result.
func Method2x1[I0, I1, R0 any](name string) Method {
	return method(name, func(f func(I0, I1) R0) reflectx.Func { return &call2x1[I0, I1, R0]{fn: f} })
}

// Method3x0 is a method with three parameters and no results.
func Method3x0[I0, I1, I2 any](name string) Method {
	return method(name, func(f func(I0, I1, I2)) reflectx.Func { return &call3x0[I0, I1, I2]{fn: f} })
}

// Method3x1 is a method with three parameters and one result.
func Method3x1[I0, I1, I2, R0 any](name string) Method {
	return method(name, func(f func(I0, I1, I2) R0) reflectx.Func { return &call3x1[I0, I1, I2, R0]{fn: f} })
}

// DoFn1x1 registers a DoFn whose ProcessElement takes one argument and
// returns one value, with its lifecycle methods.
func DoFn1x1[I0, R0 any](fn interface{ ProcessElement(I0) R0 }, methods ...Method) {
	register(fn, func(v any) reflectx.Func {
		return &call1x1[I0, R0]{fn: v.(interface{ ProcessElement(I0) R0 }).ProcessElement}
	}, methods)
}

// DoFn2x1 registers a DoFn whose ProcessElement takes two arguments and
// returns one value, with its lifecycle methods.
func DoFn2x1[I0, I1, R0 any](fn interface{ ProcessElement(I0, I1) R0 }, methods ...Method) {
	register(fn, func(v any) reflectx.Func {
		return &call2x1[I0, I1, R0]{fn: v.(interface{ ProcessElement(I0, I1) R0 }).ProcessElement}
	}, methods)
}

// DoFn2x2 registers a DoFn whose ProcessElement takes two arguments and
// returns two values, with its lifecycle methods.
func DoFn2x2[I0, I1, R0, R1 any](fn interface{ ProcessElement(I0, I1) (R0, R1) }, methods ...Method) {
	register(fn, func(v any) reflectx.Func {
		return &call2x2[I0, I1, R0, R1]{fn: v.(interface{ ProcessElement(I0, I1) (R0, R1) }).ProcessElement}
	}, methods)
}

// DoFn3x1 registers a DoFn whose ProcessElement takes three arguments and
// returns one value, with its lifecycle methods.
func DoFn3x1[I0, I1, I2, R0 any](fn interface{ ProcessElement(I0, I1, I2) R0 }, methods ...Method) {
	register(fn, func(v any) reflectx.Func {
		return &call3x1[I0, I1, I2, R0]{fn: v.(interface{ ProcessElement(I0, I1, I2) R0 }).ProcessElement}
	}, methods)
}

// DoFn4x1 registers a DoFn whose ProcessElement takes four arguments and
// returns one value, with its lifecycle methods.
func DoFn4x1[I0, I1, I2, I3, R0 any](fn interface{ ProcessElement(I0, I1, I2, I3) R0 }, methods ...Method) {
	register(fn, func(v any) reflectx.Func {
		return &call4x1[I0, I1, I2, I3, R0]{fn: v.(interface{ ProcessElement(I0, I1, I2, I3) R0 }).ProcessElement}
	}, methods)
}

// register records fn's struct type and the struct types of its
// ProcessElement's parameters and results (as Beam's register does) and a
// struct wrapper with a typed caller for ProcessElement and each of
// methods. It panics, at init, when a method is named twice, is missing,
// has another signature, or when fn has a lifecycle method not named.
func register(fn any, process func(any) reflectx.Func, methods []Method) {
	pt := reflect.TypeOf(fn)
	t := pt.Elem()
	named := map[string]Method{}
	for _, m := range methods {
		if _, dup := named[m.name]; dup {
			panic(fmt.Sprintf("beamfn: %v: method %s named twice", t, m.name))
		}
		bound, ok := pt.MethodByName(m.name)
		if !ok {
			panic(fmt.Sprintf("beamfn: %v has no method %s", t, m.name))
		}
		if got := boundType(bound.Type); got != m.typ {
			panic(fmt.Sprintf("beamfn: %v.%s is %v, registered as %v", t, m.name, got, m.typ))
		}
		named[m.name] = m
	}
	for _, name := range []string{"Setup", "StartBundle", "FinishBundle", "Teardown"} {
		if _, has := pt.MethodByName(name); has && named[name].wrap == nil {
			panic(fmt.Sprintf("beamfn: %v has %s but it was not named when the DoFn was registered "+
				"(Beam would call it by reflection): pass beamfn.MethodNxM[...](%q)", t, name, name))
		}
	}
	runtime.RegisterType(t)
	schema.RegisterType(t)
	pe := reflect.ValueOf(fn).MethodByName("ProcessElement").Type()
	for i := range pe.NumIn() {
		registerStruct(pe.In(i))
	}
	for i := range pe.NumOut() {
		registerStruct(pe.Out(i))
	}
	reflectx.RegisterStructWrapper(t, func(v any) map[string]reflectx.Func {
		out := map[string]reflectx.Func{"ProcessElement": process(v)}
		rv := reflect.ValueOf(v)
		for name, m := range named {
			out[name] = m.wrap(rv.MethodByName(name).Interface())
		}
		return out
	})
}

// boundType is the type of a method value, given the method expression's
// type (whose first parameter is the receiver).
func boundType(expr reflect.Type) reflect.Type {
	in := make([]reflect.Type, expr.NumIn()-1)
	for i := range in {
		in[i] = expr.In(i + 1)
	}
	out := make([]reflect.Type, expr.NumOut())
	for i := range out {
		out[i] = expr.Out(i)
	}
	return reflect.FuncOf(in, out, expr.IsVariadic())
}

func registerStruct(t reflect.Type) {
	if t = reflectx.SkipPtr(t); t.Kind() == reflect.Struct {
		runtime.RegisterType(t)
		schema.RegisterType(t)
	}
}

// The callers: reflectx.Func with the arity-specific fast call Beam's exec
// looks for.

type call0x0 struct{ fn func() }

func (c *call0x0) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call0x0) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call0x0) Call([]any) []any   { c.fn(); return nil }
func (c *call0x0) Call0x0()           { c.fn() }

type call0x1[R0 any] struct{ fn func() R0 }

func (c *call0x1[R0]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call0x1[R0]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call0x1[R0]) Call([]any) []any   { return []any{c.fn()} }
func (c *call0x1[R0]) Call0x1() any       { return c.fn() }

type call1x1[I0, R0 any] struct{ fn func(I0) R0 }

func (c *call1x1[I0, R0]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call1x1[I0, R0]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call1x1[I0, R0]) Call(a []any) []any { return []any{c.fn(a[0].(I0))} }
func (c *call1x1[I0, R0]) Call1x1(a0 any) any { return c.fn(a0.(I0)) }

type call2x0[I0, I1 any] struct{ fn func(I0, I1) }

func (c *call2x0[I0, I1]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call2x0[I0, I1]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call2x0[I0, I1]) Call(a []any) []any { c.fn(a[0].(I0), a[1].(I1)); return nil }
func (c *call2x0[I0, I1]) Call2x0(a0, a1 any) { c.fn(a0.(I0), a1.(I1)) }

type call2x1[I0, I1, R0 any] struct{ fn func(I0, I1) R0 }

func (c *call2x1[I0, I1, R0]) Name() string           { return reflectx.FunctionName(c.fn) }
func (c *call2x1[I0, I1, R0]) Type() reflect.Type     { return reflect.TypeOf(c.fn) }
func (c *call2x1[I0, I1, R0]) Call(a []any) []any     { return []any{c.fn(a[0].(I0), a[1].(I1))} }
func (c *call2x1[I0, I1, R0]) Call2x1(a0, a1 any) any { return c.fn(a0.(I0), a1.(I1)) }

type call2x2[I0, I1, R0, R1 any] struct{ fn func(I0, I1) (R0, R1) }

func (c *call2x2[I0, I1, R0, R1]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call2x2[I0, I1, R0, R1]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call2x2[I0, I1, R0, R1]) Call(a []any) []any {
	r0, r1 := c.fn(a[0].(I0), a[1].(I1))
	return []any{r0, r1}
}
func (c *call2x2[I0, I1, R0, R1]) Call2x2(a0, a1 any) (any, any) { return c.fn(a0.(I0), a1.(I1)) }

type call3x0[I0, I1, I2 any] struct{ fn func(I0, I1, I2) }

func (c *call3x0[I0, I1, I2]) Name() string           { return reflectx.FunctionName(c.fn) }
func (c *call3x0[I0, I1, I2]) Type() reflect.Type     { return reflect.TypeOf(c.fn) }
func (c *call3x0[I0, I1, I2]) Call(a []any) []any     { c.fn(a[0].(I0), a[1].(I1), a[2].(I2)); return nil }
func (c *call3x0[I0, I1, I2]) Call3x0(a0, a1, a2 any) { c.fn(a0.(I0), a1.(I1), a2.(I2)) }

type call3x1[I0, I1, I2, R0 any] struct{ fn func(I0, I1, I2) R0 }

func (c *call3x1[I0, I1, I2, R0]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call3x1[I0, I1, I2, R0]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call3x1[I0, I1, I2, R0]) Call(a []any) []any {
	return []any{c.fn(a[0].(I0), a[1].(I1), a[2].(I2))}
}
func (c *call3x1[I0, I1, I2, R0]) Call3x1(a0, a1, a2 any) any {
	return c.fn(a0.(I0), a1.(I1), a2.(I2))
}

type call4x1[I0, I1, I2, I3, R0 any] struct{ fn func(I0, I1, I2, I3) R0 }

func (c *call4x1[I0, I1, I2, I3, R0]) Name() string       { return reflectx.FunctionName(c.fn) }
func (c *call4x1[I0, I1, I2, I3, R0]) Type() reflect.Type { return reflect.TypeOf(c.fn) }
func (c *call4x1[I0, I1, I2, I3, R0]) Call(a []any) []any {
	return []any{c.fn(a[0].(I0), a[1].(I1), a[2].(I2), a[3].(I3))}
}
func (c *call4x1[I0, I1, I2, I3, R0]) Call4x1(a0, a1, a2, a3 any) any {
	return c.fn(a0.(I0), a1.(I1), a2.(I2), a3.(I3))
}
