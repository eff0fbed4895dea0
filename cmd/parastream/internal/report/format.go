package report

import (
	"fmt"
	"sort"
	"strings"
)

// Breakdown is " (a 1, b 2)", by key, or "" for an empty map.
func Breakdown[K ~string](m map[K]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[K(k)])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Sum is the sum of the map's values.
func Sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// HumanBytes is n in B, KiB, MiB or GiB.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// plural is "1 file", "2 files".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sumPrefix(c map[string]int64, prefix string) int64 {
	var n int64
	for k, v := range c {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func breakdownPrefix(c map[string]int64, prefix string) string {
	m := map[string]int64{}
	for k, v := range c {
		if strings.HasPrefix(k, prefix) && v > 0 {
			m[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return Breakdown(m)
}
