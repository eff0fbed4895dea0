package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceCheckWithoutGPU: `device check` without a usable driver
// exits 1 with the loader's message; a device that is not a GPU or no
// subcommand is a usage error. The check itself (every case, a planted
// fault failing it) is tested in trainstep/cuda on the emulator.
func TestDeviceCheckWithoutGPU(t *testing.T) {
	skipWithGPU(t)
	dir := fakeDriverDir(t)
	code, out, errOut := runCLI(t, "device", "check", "--device", "cuda:1", "--cuda-lib-dir", dir)
	if code != 1 || !strings.Contains(errOut, "--device cuda:1") || !strings.Contains(errOut, filepath.Join(dir, "libcuda.so.1")) || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"device"}, {"device", "list"}, {"device", "check", "--device", "cpu"}, {"device", "check", "--bogus"}} {
		if code, _, errOut := runCLI(t, args...); code != 2 || !strings.Contains(errOut, "usage: parastream device check") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, out, _ := runCLI(t, "device", "check", "--help"); code != 0 || !strings.Contains(out, "--tf32") {
		t.Errorf("--help: exit %d, stdout %q", code, out)
	}
}
