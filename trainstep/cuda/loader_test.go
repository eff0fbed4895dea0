package cuda_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
)

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenNoLibraries: with nothing installed, Open says the driver
// library is missing, names the files and every directory searched, and
// how to point at one.
func TestOpenNoLibraries(t *testing.T) {
	root := t.TempDir()
	env := cuda.WithoutLoaderCache(cuda.Env{Root: root, LDLibraryPath: filepath.Join(root, "ld1") + ":" + filepath.Join(root, "ld2")})
	_, err := cuda.Open(cuda.Options{Env: env, CacheDir: "-"})
	var le *cuda.LibraryError
	if !errors.As(err, &le) || !errors.Is(err, cuda.ErrLibrary) {
		t.Fatalf("error %v, want a *LibraryError", err)
	}
	msg := err.Error()
	for _, want := range []string{"NVIDIA driver", "libcuda.so.1", "not found", filepath.Join(root, "ld1"), filepath.Join(root, "ld2"),
		filepath.Join(root, "/usr/lib/x86_64-linux-gnu"), filepath.Join(root, "/usr/local/cuda/lib64"), filepath.Join(root, "/usr/lib/wsl/lib"),
		"--cuda-lib-dir", cuda.LibDirEnv, "(unset)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

// TestOpenNotALibrary: a file named libcuda.so.1 that is not a shared
// library is reported as found but not loadable, with the loader's reason.
func TestOpenNotALibrary(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(fake, []byte(strings.Repeat("not an ELF shared library\n", 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cuda.WithoutLoaderCache(cuda.Env{LibDir: dir, Root: t.TempDir()})
	_, err := cuda.Open(cuda.Options{Env: env, CacheDir: "-"})
	if !errors.Is(err, cuda.ErrLibrary) {
		t.Fatalf("error %v, want ErrLibrary", err)
	}
	msg := err.Error()
	for _, want := range []string{"found but not loadable", fake, "ELF"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "(unset)") {
		t.Errorf("message says the directory is unset:\n%s", msg)
	}
}

// TestOpenHere: on this machine (no NVIDIA driver in CI) Open fails with
// ErrLibrary or ErrNoDevice, never a panic; where a GPU is present it
// opens and reports the device. With PARASTREAM_TEST_GPU set, failing to
// open is an error.
func TestOpenHere(t *testing.T) {
	b, err := cuda.Open(cuda.Options{Env: cuda.EnvFromOS(""), CacheDir: t.TempDir()})
	if err != nil {
		if !errors.Is(err, cuda.ErrLibrary) && !errors.Is(err, cuda.ErrNoDevice) {
			t.Fatalf("error %v: neither ErrLibrary nor ErrNoDevice", err)
		}
		if _, ok := gpuRequested(); ok {
			t.Fatalf("%s is set and no GPU opens: %v", gpuTestEnv, err)
		}
		t.Logf("no GPU here: %v", err)
		return
	}
	defer b.Close()
	t.Logf("opened %s", b.Device())
	if b.Name() != "cuda:0" {
		t.Errorf("name %q", b.Name())
	}
}

// TestSearchOrder: explicit directory, LD_LIBRARY_PATH, the usual places
// (newest versioned toolkit first), then NVIDIA's pip wheels of the
// virtualenv, ~/.local and the system pythons.
func TestSearchOrder(t *testing.T) {
	root, home, venv := t.TempDir(), t.TempDir(), t.TempDir()
	mkdirs(t, root, "/usr/local/cuda-12.4/lib64", "/usr/local/cuda-13.0/lib64",
		"/usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib", "/usr/lib/python3/dist-packages")
	mkdirs(t, home, ".local/lib/python3.12/site-packages")
	mkdirs(t, venv, "lib/python3.12/site-packages")
	env := cuda.Env{LibDir: "/opt/explicit", LDLibraryPath: "/opt/ld:/opt/explicit", Root: root, Home: home, VirtualEnv: venv}
	got := cuda.SearchDirs(env)
	want := []string{"/opt/explicit", "/opt/ld",
		filepath.Join(root, "/usr/lib/x86_64-linux-gnu"), filepath.Join(root, "/usr/lib64"), filepath.Join(root, "/usr/local/cuda/lib64"),
		filepath.Join(root, "/usr/local/cuda-13.0/lib64"), filepath.Join(root, "/usr/local/cuda-12.4/lib64"),
		filepath.Join(root, "/usr/lib/wsl/lib"),
		filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cu13/lib"), filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cublas/lib"),
		filepath.Join(home, ".local/lib/python3.12/site-packages/nvidia/cu13/lib"), filepath.Join(home, ".local/lib/python3.12/site-packages/nvidia/cublas/lib"),
		filepath.Join(root, "/usr/local/lib/python3.11/dist-packages/nvidia/cu13/lib"), filepath.Join(root, "/usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib"),
		filepath.Join(root, "/usr/lib/python3/dist-packages/nvidia/cu13/lib"), filepath.Join(root, "/usr/lib/python3/dist-packages/nvidia/cublas/lib"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("search order\n got %q\nwant %q", got, want)
	}
}

// TestWheelFound: a cuBLAS in a pip wheel's directory is found there (here
// a fake one, reported as not loadable, which shows where it was found).
func TestWheelFound(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	wheel := filepath.Join(home, ".local/lib/python3.12/site-packages/nvidia/cublas/lib")
	mkdirs(t, home, ".local/lib/python3.12/site-packages/nvidia/cublas/lib")
	if err := os.WriteFile(filepath.Join(wheel, "libcublas.so.12"), []byte("fake"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := cuda.LoadCUBLAS(cuda.WithoutLoaderCache(cuda.Env{Root: root, Home: home}))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(wheel, "libcublas.so.12")) || !strings.Contains(err.Error(), "cuBLAS") {
		t.Fatalf("error %v, want the wheel's fake library named", err)
	}
}
