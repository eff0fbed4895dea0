//go:build !linux

package sysmem

// adviseHuge does nothing where there is no madvise(MADV_HUGEPAGE).
func adviseHuge(addr, length uintptr) {}
