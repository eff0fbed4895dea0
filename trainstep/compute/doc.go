// Package compute is the contract between the training loop and the devices
// that do the arithmetic: the model configuration, the encoder list
// (EncoderSpecs: every fact about an encoder but its graph, which each
// backend builds from a table of its own keyed by the list), the parameter
// layout and its initialisation, the prepared batch (token ids, masks and every random
// draw, so that all backends compute the same thing), the Backend and Model
// interfaces, and reference optimisers on host memory.
//
// A backend (the gorgonia CPU backend in trainstep/cpu, a CUDA backend
// later) implements Backend; the loop never sees a graph or a device buffer.
package compute
