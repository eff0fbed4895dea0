package cuda

// Hooks for the external tests.

// CSignatures parses the kernels' C signatures.
var CSignatures = cSignatures

// KernelParams are the Go twins' parameter lists by kernel name.
func KernelParams() map[string][]string {
	out := map[string][]string{}
	for _, k := range newKernels() {
		out[k.name] = k.params
	}
	return out
}

// LaunchBlocks is the number of blocks of a launch of kernel name with
// integer arguments ints (the others zero).
func LaunchBlocks(name string, ints map[int]int) (int, int, error) {
	for _, k := range newKernels() {
		if k.name != name {
			continue
		}
		a := make([]arg, len(k.params))
		for i, p := range k.params {
			a[i].kind = p[0]
			a[i].n = int32(ints[i])
		}
		return launchDims(k, a)
	}
	panic("no kernel " + name)
}

// WithoutLoaderCache is e that does not ask the dynamic loader by name.
func WithoutLoaderCache(e Env) Env { e.noLoaderCache = true; return e }

// SearchDirs are the directories searched for cuBLAS.
func SearchDirs(e Env) []string { return e.searchDirs(libCUBLAS()) }

// CompileKernels compiles Source for arch with the NVRTC that env finds.
func CompileKernels(env Env, arch int) (ptx, version string, archs []int, err error) {
	r, err := loadNVRTC(env)
	if err != nil {
		return "", "", nil, err
	}
	if archs, err = r.archs(); err != nil {
		return "", "", nil, err
	}
	ptx, err = r.compile(Source(), "parastream_kernels.cu", CompileOptions(arch))
	return ptx, r.version(), archs, err
}

// CachedPTX is nvrtc.cachedPTX with the NVRTC that env finds.
func CachedPTX(env Env, dir string, arch int) (string, bool, error) {
	r, err := loadNVRTC(env)
	if err != nil {
		return "", false, err
	}
	return r.cachedPTX(dir, Source(), CompileOptions(arch))
}

// LoadCUBLAS loads cuBLAS as Open does.
func LoadCUBLAS(env Env) error {
	_, err := loadCUBLAS(env)
	return err
}

// GraphStats are a model's captured steps, replays and evicted graphs
// (zeros with CUDA graphs off).
func GraphStats(m any) (captures, replays, evicted int) {
	c := m.(*model).graphs
	if c == nil {
		return 0, 0, 0
	}
	return c.captures, c.replays, c.evicted
}
