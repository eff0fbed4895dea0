package sysmem

import "unsafe"

// hugePage is the size of a transparent huge page on amd64 and arm64
// Linux (2 MiB); MakeHuge advises the kernel only for tables of at least
// two of them.
const hugePage = 2 << 20

// MakeHuge returns a zeroed slice of n values, like make, and, where the
// kernel has transparent huge pages in madvise mode (the default of most
// distributions), asks for them for the slice's whole 2 MiB pages.
//
// A training step's sparse update reads and writes a few thousand rows at
// random across the embeddings, their gradient and the optimiser's moments:
// four tables of vocabulary × dimension values, 480 MB each at 400,000
// words and dimension 300. With 4 KiB pages every row touched costs a TLB
// miss in each table, and the page tables themselves (a 4 MB walk per
// 2 GB) no longer fit in the caches, so the step slows as the vocabulary
// grows; with 2 MiB pages the walks stay cached. The Go runtime gives its
// heap no such advice (it stopped in Go 1.21.1), so the tables that matter
// ask for it themselves. Small tables and other systems get plain make.
func MakeHuge[T any](n int) []T {
	s := make([]T, n)
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	if size < 2*hugePage {
		return s
	}
	// The slice's whole huge pages: the hint covers only memory that is
	// the slice's, so that it changes nothing for its neighbours.
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + size) &^ (hugePage - 1)
	if hi > lo {
		adviseHuge(lo, hi-lo)
	}
	return s
}
