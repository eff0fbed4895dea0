// Package pipelines holds parastream's whole Beam pipelines (extraction and
// featurize) and the drivers that run them: the composition root of the
// transforms and featurize packages.
//
// A pipeline is built by a function, Extract(s, cfg), that tests call too,
// and run by RunExtract on any Beam runner: Prism in-process by default, or
// Flink, Spark or Dataflow by the runner flags Beam registers. The drivers
// build and run pipelines and report summaries; the output's files are
// shards.Output's, written, placed and removed through it (a test checks
// that this package calls nothing that writes, renames or removes files).
package pipelines
