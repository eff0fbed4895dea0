package synth

import (
	"math"
	"math/bits"
)

// rng is wyrand: a 64-bit generator with one word of state, fast, and of
// good enough quality for synthetic text. Its sequence is fixed by its
// definition, so a seed gives the same bytes with every Go version.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed ^ 0x9e3779b97f4a7c15} }

// mix is splitmix64's finaliser: it derives independent seeds from one.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (r *rng) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// rangeIn returns a number in [lo, hi].
func (r *rng) rangeIn(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// chance reports true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// exp returns an exponential variate of mean 1.
func (r *rng) exp() float64 { return -math.Log(1 - r.float()) }

// normal returns a standard normal variate (Box-Muller, one of the pair).
func (r *rng) normal() float64 {
	u := 1 - r.float()
	v := r.float()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// pareto returns a variate of P(X > x) = x^-alpha for x >= 1.
func (r *rng) pareto(alpha float64) float64 {
	return math.Pow(1-r.float(), -1/alpha)
}

// pick returns a random element of s.
func pick[T any](r *rng, s []T) T { return s[r.intn(len(s))] }

// alias samples indexes in O(1) with given weights (Vose's alias method).
type alias struct {
	prob  []float64
	alias []int32
}

func newAlias(w []float64) *alias {
	n := len(w)
	a := &alias{prob: make([]float64, n), alias: make([]int32, n)}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	scaled := make([]float64, n)
	var small, large []int
	for i, x := range w {
		scaled[i] = x * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.alias[s] = scaled[s], int32(l)
		scaled[l] = scaled[l] + scaled[s] - 1
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		a.prob[i] = 1
	}
	for _, i := range small {
		a.prob[i] = 1
	}
	return a
}

// zipfAlias weights n ranks by 1/(rank+offset)^s.
func zipfAlias(n int, s, offset float64) *alias {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1)+offset, s)
	}
	return newAlias(w)
}

func (a *alias) sample(r *rng) int {
	x := r.next()
	hi, lo := bits.Mul64(x, uint64(len(a.prob)))
	i := int(hi)
	if float64(lo>>11)*(1.0/(1<<53)) < a.prob[i] {
		return i
	}
	return int(a.alias[i])
}

// zipfLarge samples ranks 0..n-1 of a Zipf law of exponent about 1 over a
// range too large for a table (authors, say), by inverting the continuous
// law: rank = floor(n^u) - 1.
func zipfLarge(r *rng, n float64) int64 {
	return int64(math.Pow(n, r.float())) - 1
}
