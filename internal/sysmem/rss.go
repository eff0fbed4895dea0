package sysmem

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is this process's peak resident set in bytes (VmHWM of
// /proc/self/status): since it started, or since the last ResetPeakRSS.
// Linux only: elsewhere ok is false.
func PeakRSS() (bytes int64, ok bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, found := strings.CutPrefix(line, "VmHWM:"); found {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err == nil
			}
		}
	}
	return 0, false
}

// TrackPeakRSS resets the peak resident set (ResetPeakRSS) and returns
// what reads the peak since: ok is false where either cannot be done, so
// that a peak that could not be reset is never taken for the stage's.
func TrackPeakRSS() (peak func() (bytes int64, ok bool)) {
	resetErr := ResetPeakRSS()
	return func() (int64, bool) {
		b, ok := PeakRSS()
		return b, ok && resetErr == nil
	}
}

// ResetPeakRSS sets this process's peak resident set to its resident set
// now (writing 5 to /proc/self/clear_refs, Linux 4.0 on), so that PeakRSS
// then measures the peak of what follows: one stage of a benchmark among
// several in a process.
func ResetPeakRSS() error {
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return errors.Join(errors.New("resetting the peak RSS"), err)
	}
	_, err = f.WriteString("5")
	return errors.Join(err, f.Close())
}
