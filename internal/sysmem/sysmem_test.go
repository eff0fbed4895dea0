package sysmem

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func write(t *testing.T, root, file, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

const meminfo = "MemTotal:       24683620 kB\nMemFree:         8000000 kB\n"

func TestLimit(t *testing.T) {
	const total = 24683620 << 10
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup file", map[string]string{}, total},
		{"v2 unlimited", map[string]string{
			"proc/self/cgroup":                        "0::/user.slice/job\n",
			"sys/fs/cgroup/user.slice/job/memory.max": "max\n",
		}, total},
		{"v2 limit", map[string]string{
			"proc/self/cgroup":                        "0::/user.slice/job\n",
			"sys/fs/cgroup/user.slice/job/memory.max": "4294967296\n",
		}, 4 << 30},
		{"v2 limit of an ancestor", map[string]string{
			"proc/self/cgroup":                        "0::/user.slice/job\n",
			"sys/fs/cgroup/user.slice/job/memory.max": "max\n",
			"sys/fs/cgroup/user.slice/memory.max":     "2147483648\n",
		}, 2 << 30},
		{"v1 limit, the container's path unmounted", map[string]string{
			"proc/self/cgroup":                           "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "3221225472\n",
		}, 3 << 30},
		{"v1 unlimited", map[string]string{
			"proc/self/cgroup": "4:memory:/process_api/x\n0::/\n",
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
		}, total},
		{"a limit above the machine's memory", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "99999999999999\n",
		}, total},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "proc/meminfo", meminfo)
			for f, data := range tc.files {
				write(t, root, f, data)
			}
			got, err := limitUnder(root)
			if err != nil || got != tc.want {
				t.Errorf("limit %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	if _, err := limitUnder(t.TempDir()); err == nil {
		t.Error("no meminfo: no error")
	}
}

// TestLimitHere: on this machine the limit is positive and at most its
// memory.
func TestLimitHere(t *testing.T) {
	got, err := Limit()
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	total, _ := memTotal("/proc/meminfo")
	if got <= 0 || got > total {
		t.Errorf("limit %d, machine %d", got, total)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4GiB": 4 << 30, "4gib": 4 << 30, "4G": 4 << 30, "4GB": 4e9, "512MiB": 512 << 20, "512 MB": 512e6,
		"1.5g": 3 << 29, "1048576": 1 << 20, "0": 0, "100B": 100, "2TiB": 2 << 40, "1k": 1024,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "4 parsecs", "4GiBs", "1e30", "99999999TiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, no error", in, got)
		}
	}
}

// TestPeakRSS: the peak follows a large allocation, and a reset brings it
// back below it once the memory is gone.
func TestPeakRSS(t *testing.T) {
	before, ok := PeakRSS()
	if !ok {
		t.Skip("no /proc/self/status VmHWM here")
	}
	const size = 256 << 20
	buf := make([]byte, size)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	peak, _ := PeakRSS()
	if peak < size {
		t.Fatalf("peak RSS %d after touching %d bytes (was %d)", peak, size, before)
	}
	runtime.KeepAlive(buf)
	buf = nil
	runtime.GC()
	debug.FreeOSMemory()
	if err := ResetPeakRSS(); err != nil {
		t.Skipf("cannot reset the peak here: %v", err)
	}
	after, _ := PeakRSS()
	if tracked, ok := TrackPeakRSS()(); !ok || tracked >= peak {
		t.Fatalf("TrackPeakRSS read %d (ok %v) with the %d bytes freed, the peak was %d", tracked, ok, size, peak)
	}
	if after >= peak {
		t.Fatalf("peak RSS %d after a reset with the %d bytes freed, was %d", after, size, peak)
	}
}

// TestMakeHuge: the slice is what make gives, zeroed, at every size.
func TestMakeHuge(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := MakeHuge[float32](n)
		if len(s) != n {
			t.Fatalf("MakeHuge(%d) has length %d", n, len(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("MakeHuge(%d)[%d] = %v, want 0", n, i, v)
			}
		}
		for i := range s {
			s[i] = float32(i)
		}
		for i, v := range s {
			if v != float32(i) {
				t.Fatalf("MakeHuge(%d)[%d] = %v after writing %d", n, i, v, i)
			}
		}
	}
}

// TestMakeHugeHugePages: where the kernel offers transparent huge pages
// (always or madvise), a table of 16 MiB is backed by them once touched.
func TestMakeHugeHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !(strings.Contains(string(mode), "[always]") || strings.Contains(string(mode), "[madvise]")) {
		t.Skipf("no transparent huge pages here (%q, %v)", mode, err)
	}
	s := MakeHuge[float32](4 << 20)
	for i := 0; i < len(s); i += 1024 {
		s[i] = 1
	}
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s))))
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	huge := int64(0)
	in := false
	for line := range strings.Lines(string(smaps)) {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && addr+uint64(len(s))*4 > a && addr < b
			continue
		}
		if in && len(f) >= 2 && f[0] == "AnonHugePages:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			huge += kb << 10
		}
	}
	runtime.KeepAlive(s)
	if huge < 2<<20 {
		t.Fatalf("a 16 MiB table from MakeHuge has %d bytes of huge pages, want at least 2 MiB", huge)
	}
}

// TestCPUTime checks that work shows in the process's CPU time, and that
// a child's time shows once it has been waited for.
func TestCPUTime(t *testing.T) {
	self0, child0, ok := CPUTime()
	if !ok {
		t.Skip("no CPU time on this system")
	}
	// About 50 ms of work on one core (sha256 of 100 MB at 2 GB/s).
	buf := make([]byte, 1<<20)
	var sum [32]byte
	for range 100 {
		sum = sha256.Sum256(append(buf[:0:0], buf...))
		buf[0] = sum[0]
	}
	if self1, _, _ := CPUTime(); self1 <= self0 {
		t.Errorf("hashing 100 MB added no CPU time (%v then %v)", self0, self1)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if err := exec.Command(sh, "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	if _, child1, _ := CPUTime(); child1 <= child0 {
		t.Errorf("a child's loop added no CPU time to the children's (%v then %v)", child0, child1)
	}
}
