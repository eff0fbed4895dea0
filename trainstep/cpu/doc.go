// Package cpu is the gorgonia CPU backend of trainstep: it implements
// compute.Backend with one gorgonia expression graph per batch shape
// (pairs, padded length), built on first use and cached, and symbolic
// gradients read back after each run (no dual values, so nothing
// accumulates across runs).
//
// Word and bigram embeddings stay on the host: a batch's rows are gathered
// into the graph's input tensor (with dropout applied) and the input's
// gradient is scattered back, so a large vocabulary costs no graph memory.
// The λc and λw terms and the optimiser run on the host too.
package cpu
