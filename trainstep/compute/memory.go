package compute

import "fmt"

// Memory is what a backend's model holds in host memory, as it accounts
// for it against its budget.
type Memory struct {
	// Budget is the model's budget in bytes (0: none).
	Budget int64
	// Host is the bytes of the parameters, their gradients and the
	// optimiser state.
	Host int64
	// Graphs is the number of compiled graphs held, Held the bytes they
	// keep between steps (their inputs and structure) and Run the most
	// that one of them takes while it runs (the values of its nodes,
	// released when the run ends).
	Graphs    int
	Held, Run int64
}

// Peak is the most the model takes: the host tensors, every held graph
// and the largest run.
func (m Memory) Peak() int64 { return m.Host + m.Held + m.Run }

// Flusher is a Model that defers work of past steps (the row-sparse
// catch-up, CatchUp) and completes it through step on Flush. The trainer
// flushes before it writes a checkpoint.
type Flusher interface {
	Flush(step int64) error
}

// MemoryReporter is a Model that accounts for its memory.
type MemoryReporter interface {
	Memory() Memory
}

// FormatBytes writes n bytes for people: 512 B, 3.2 MiB, 1.50 GiB.
func FormatBytes(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KiB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MiB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(k*k*k))
}
