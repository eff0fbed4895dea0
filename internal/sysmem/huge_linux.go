package sysmem

import "syscall"

// madvCollapse is MADV_COLLAPSE (Linux 6.1), which the syscall package
// does not name.
const madvCollapse = 25

// adviseHuge asks for transparent huge pages for length bytes at addr:
// MADV_HUGEPAGE, so that pages faulted from now on are huge, then
// MADV_COLLAPSE, so that those already faulted (memory the Go heap had
// used and zeroed again) are made huge too, now. A kernel without either
// refuses it, which changes nothing.
func adviseHuge(addr, length uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, length, syscall.MADV_HUGEPAGE)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, length, madvCollapse)
}
