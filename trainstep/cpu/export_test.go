package cpu

import "github.com/parastream/parastream/trainstep/compute"

// GraphCost is the cost that the model m (of this backend) accounts for
// the training graph of rows rows and T steps: held between runs (inputs
// of it), and taken while it runs.
func GraphCost(m compute.Model, rows, T int) (held, inputs, run int64, err error) {
	var c cost
	switch m := m.(type) {
	case *model[float32]:
		gr, err := m.build(graphKey{rows: rows, T: T, train: true})
		if err != nil {
			return 0, 0, 0, err
		}
		c = gr.cost
	case *model[float64]:
		gr, err := m.build(graphKey{rows: rows, T: T, train: true})
		if err != nil {
			return 0, 0, 0, err
		}
		c = gr.cost
	}
	return c.held(), c.inputs, c.run, nil
}
