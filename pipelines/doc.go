// Package pipelines holds parastream's whole Beam pipelines (extraction;
// featurize to come) and the drivers that run them: the composition root of
// the transforms package.
//
// A pipeline is built by a function, Extract(s, cfg), that tests call too,
// and run by RunExtract on any Beam runner: Prism in-process by default, or
// Flink, Spark or Dataflow by the runner flags Beam registers.
package pipelines
