// Package sample has one of each violation and exemption archlint knows;
// main_test.go lists what it must report.
package sample

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Allowed package-level vars.
var (
	ErrOne   = errors.New("one")
	errTwo   = fmt.Errorf("two: %w", ErrOne)
	ErrThree = fs.ErrNotExist // another package's sentinel
	errFour  error
	verbose               = flag.Bool("verbose", false, "a flag")
	flags                 = flag.NewFlagSet("sample", flag.ContinueOnError)
	counter               = register.Function1x1[int, int](double)
	_        fmt.Stringer = name("") // a compile-time assertion

	//go:embed sample.go
	source embed.FS

	// Version is in the tool's allow-list.
	Version = "dev"
)

// Violations: mutable state.
var (
	Table = []string{"a", "b"}
	count int
)

var cache = map[string]int{}

type name string

func (n name) String() string { return string(n) }

func double(x int) int { return 2 * x }

// Six parameters are fine.
func six(a, b, c, d, e, f int) int { return a + b + c + d + e + f }

// Seven are not.
func seven(a, b, c, d, e, f, g int) int { return a + b + c + d + e + f + g }

type server struct{}

// Nor on a method.
func (s *server) handle(a, b, c string, d, e, f int, g bool) {}

// cgemm is in the allow-list: a binding that mirrors a C signature.
func cgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
}
