package cpu

import (
	"fmt"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/parastream/parastream/trainstep/compute"
)

func init() {
	// A graph's values are released after each run (graph.release):
	// gorgonia's unbind hands a node's tensor back to the tensor
	// package's pool, which is unsafe when two nodes hold one tensor (an
	// op that overwrites its input returns that input's tensor), since the
	// pool would hand it out twice. Without the pool, unbound tensors are
	// left to the garbage collector.
	tensor.DontUsePool()
}

// nodeBytes is the heap a graph node costs beside its value: the node, its
// type and shape, its gradient bookkeeping and its instructions in the
// compiled program. Measured on avg, lstmavg and gran graphs (their heap
// after a run, less their inputs, over their nodes: 1.0 to 1.1 KiB a node);
// TestGraphCostTracksHeap checks the figures of measure against the heap.
const nodeBytes = 1200

// cost is what a graph costs in memory, from the shapes of its nodes.
type cost struct {
	// inputs are the values of its inputs (the parameters, shared with the
	// model, left out) and nodes the number of its nodes: with nodeBytes
	// each, what the graph holds while cached (held).
	inputs int64
	nodes  int
	// work is the buffers of fused nodes (workspace), made with the graph
	// and kept while it is.
	work int64
	// run is taken while it runs: the values of every other node, bound
	// by the run and released when it ends, but for those computed in
	// place (inPlace).
	run int64
}

func (c cost) held() int64  { return c.inputs + c.work + int64(c.nodes)*nodeBytes }
func (c cost) total() int64 { return c.held() + c.run }

// measure adds up the cost of the graph g, whose parameter nodes are
// those for which shared reports true.
func measure(g *G.ExprGraph, shared func(*G.Node) bool) cost {
	var c cost
	for _, n := range g.AllNodes() {
		c.nodes++
		size := int64(n.Dtype().Size())
		if !n.IsScalar() {
			size *= int64(n.Shape().TotalSize())
		}
		if ws, ok := n.Op().(workspace); ok {
			c.work += ws.workBytes()
		}
		switch {
		case n.Op() == nil:
			if !shared(n) {
				c.inputs += size
			}
		case isReshape(n):
			// A reshape of a dense tensor is a shallow clone: no values.
		case !inPlace(g, n):
			c.run += size
		}
	}
	return c
}

// isReshape reports whether n is gorgonia's reshape (its op type is not
// exported; its String is "Reshape(dims)").
func isReshape(n *G.Node) bool { return strings.HasPrefix(n.Op().String(), "Reshape") }

// workspace is an op that owns buffers of its own beside its output: the
// fused LSTM and GRAN gate nodes (lstm.go, gate.go).
type workspace interface{ workBytes() int64 }

// inPlace reports whether gorgonia's compiler will most likely compute n
// in the memory of one of its operands: n's op may overwrite that operand
// (an element-wise op), which is itself computed (not an input) and read
// by n alone, so that its register is free for n's result.
func inPlace(g *G.ExprGraph, n *G.Node) bool {
	i := n.Op().OverwritesInput()
	if i < 0 {
		return false
	}
	children := g.From(n.ID())
	if i >= children.Len() {
		return false
	}
	for k := 0; children.Next(); k++ {
		if k != i {
			continue
		}
		c := children.Node().(*G.Node)
		return c.Op() != nil && g.To(c.ID()).Len() == 1 && c.Shape().Eq(n.Shape()) && c.Dtype() == n.Dtype()
	}
	return false
}

// hostBytes is what the model keeps beside its graphs: parameters and
// gradients in the graph's float type, the optimiser's float32 state and
// the λw term's initial embeddings.
func (m *model[T]) hostBytes() int64 {
	var elem T
	size := int64(8)
	if _, ok := any(elem).(float32); ok {
		size = 4
	}
	slots := int64(0) // float32 state values per parameter (compute.NewOptimizer)
	switch m.cfg.Optimizer {
	case compute.OptAdam:
		slots = 2
	case compute.OptRMSProp:
		slots = 1
	}
	var n int64
	for _, s := range m.specs {
		if s.Name == compute.ParamEmbeddings && m.compact {
			// The gradient is the batch's rows, not a table.
			n += (size+4*slots)*int64(compute.NumElems(s.Shape)) + size*int64(compactRows(m.cfg)*m.cfg.Dim)
		} else {
			n += (2*size + 4*slots) * int64(compute.NumElems(s.Shape))
		}
		if slots > 0 && compute.SparseParam(m.cfg, s.Name) {
			n += 4 * int64(s.Shape[0]) // the rows' last update steps (compute.CatchUp)
		}
	}
	return n + size*int64(len(m.init))
}

// BudgetError is returned when one graph alone needs more memory than
// the budget leaves for graphs; it wraps compute.ErrMemoryBudget.
type BudgetError struct {
	Rows, Steps int
	// Need is the graph's cost (held and while it runs), Run the part
	// taken while it runs.
	Need, Run int64
	// Budget is the model's budget and Host what its parameters, gradients
	// and optimiser state take of it.
	Budget, Host int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the graph for %d rows of %d steps needs %s (%s of it while it runs), more than the %s that a memory budget of %s leaves beside %s of parameters, gradients and optimiser state",
		e.Rows, e.Steps, compute.FormatBytes(e.Need), compute.FormatBytes(e.Run), compute.FormatBytes(e.Budget-e.Host),
		compute.FormatBytes(e.Budget), compute.FormatBytes(e.Host))
}

func (e *BudgetError) Unwrap() error { return compute.ErrMemoryBudget }

// admit makes room in the cache for a graph of cost c for key k: it drops
// the least recently used graphs until the held graphs, the new one
// included, and the largest run among them fit the budget and the count
// bound. It fails, dropping nothing, when the new graph alone does not fit.
func (m *model[T]) admit(k graphKey, c cost) error {
	avail := m.budget - m.host
	if m.budget > 0 && c.total() > avail {
		return &BudgetError{Rows: k.rows, Steps: k.T, Need: c.total(), Run: c.run, Budget: m.budget, Host: m.host}
	}
	over := func() bool {
		if m.maxGraphs > 0 && len(m.recent) >= m.maxGraphs {
			return true
		}
		if m.budget == 0 {
			return false
		}
		run := c.run
		for _, key := range m.recent {
			run = max(run, m.graphs[key].cost.run)
		}
		return m.held+c.held()+run > avail
	}
	for len(m.recent) > 0 && over() {
		if err := m.evict(m.recent[0]); err != nil {
			return err
		}
	}
	return nil
}

// evict drops the graph of key k.
func (m *model[T]) evict(k graphKey) error {
	gr := m.graphs[k]
	delete(m.graphs, k)
	if i := slices.Index(m.recent, k); i >= 0 {
		m.recent = append(m.recent[:i:i], m.recent[i+1:]...)
	}
	m.held -= gr.cost.held()
	if err := gr.vm.Close(); err != nil {
		return fmt.Errorf("releasing the graph for %d rows of %d steps: %w", k.rows, k.T, err)
	}
	return nil
}

// Memory implements compute.MemoryReporter.
func (m *model[T]) Memory() compute.Memory {
	mem := compute.Memory{Budget: m.budget, Host: m.host, Graphs: len(m.graphs), Held: m.held}
	for _, gr := range m.graphs {
		mem.Run = max(mem.Run, gr.cost.run)
	}
	return mem
}

// release drops the values a run bound to the graph's nodes (its inputs
// stay), so that a cached graph holds only its inputs and structure.
func (gr *graph) release() {
	gr.vm.Reset()
	gr.g.UnbindAllNonInputs()
}
