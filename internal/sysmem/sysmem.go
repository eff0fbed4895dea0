// Package sysmem is this process's memory as the system sees it: how much
// it may use (Limit: the limit of its memory cgroup, v2 memory.max, v1
// memory.limit_in_bytes, the nearest ancestors' included, and the
// machine's memory, /proc/meminfo MemTotal, whichever is smaller), its peak
// resident set (PeakRSS, ResetPeakRSS), and large tables on transparent
// huge pages (MakeHuge). Linux only: elsewhere Limit returns an error,
// PeakRSS reports none and MakeHuge is make.
package sysmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Limit is the memory, in bytes, this process may use.
func Limit() (int64, error) { return limitUnder("/") }

// limitUnder is Limit over a file tree rooted at root (tests give a fake
// one).
func limitUnder(root string) (int64, error) {
	total, err := memTotal(filepath.Join(root, "proc", "meminfo"))
	if err != nil {
		return 0, err
	}
	limit := total
	for _, l := range cgroupLimits(root) {
		limit = min(limit, l)
	}
	return limit, nil
}

// memTotal reads MemTotal from a meminfo file.
func memTotal(file string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("reading the machine's memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0, fmt.Errorf("reading the machine's memory: %s: MemTotal %q", file, f[1])
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("reading the machine's memory: %s has no MemTotal", file)
}

// cgroupLimits are the memory limits of the process's cgroups and their
// ancestors, v2 and v1, as far as they are readable: unlimited ones and
// unreadable files are left out.
func cgroupLimits(root string) []int64 {
	data, err := os.ReadFile(filepath.Join(root, "proc", "self", "cgroup"))
	if err != nil {
		return nil
	}
	var out []int64
	base := filepath.Join(root, "sys", "fs", "cgroup")
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			// v2: the unified hierarchy, mounted at /sys/fs/cgroup (or at
			// /sys/fs/cgroup/unified beside v1 controllers).
			for _, dir := range []string{base, filepath.Join(base, "unified")} {
				out = append(out, upwards(dir, parts[2], "memory.max")...)
			}
		case hasController(parts[1], "memory"):
			out = append(out, upwards(filepath.Join(base, "memory"), parts[2], "memory.limit_in_bytes")...)
		}
	}
	return out
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// upwards reads file in the cgroup dir under mount and in each of its
// ancestors up to mount. In a container the path may name a cgroup of the
// host that is not mounted: its ancestors that are, mount itself at least,
// are read.
func upwards(mount, cgroup, file string) []int64 {
	var out []int64
	p := path.Clean("/" + cgroup)
	for {
		if v, err := readLimit(filepath.Join(mount, filepath.FromSlash(p), file)); err == nil {
			out = append(out, v)
		}
		if p == "/" {
			return out
		}
		p = path.Dir(p)
	}
}

// errNoLimit is a cgroup file that sets no limit.
var errNoLimit = errors.New("no limit")

// readLimit reads a cgroup memory limit: a number of bytes, or "max" (v2)
// or a huge number (v1, rounded 2^63-1) for none.
func readLimit(file string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, errNoLimit
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q: %w", file, s, err)
	}
	if v <= 0 || v >= 1<<62 {
		return 0, errNoLimit
	}
	return v, nil
}

// ParseSize reads a size in bytes: a number with an optional unit, B, K,
// KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB (case ignored; K, M, G
// and T and the iB units are powers of 1024, KB, MB, GB and TB powers of
// 1000): 4GiB, 512MB, 1.5g, 1048576.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: give a number of bytes with an optional unit, as 4GiB or 512MB", s)
	}
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q: use B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (of 1000)", s, unit)
	}
	if v*mult >= 1<<63 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(v * mult), nil
}
