// Package report prints what the commands did: the summaries of extract,
// featurize, eval, read and gen, the topics of a featurize model, and the
// hints that end a summary when a rule dropped most of the input. The
// command line (cmd/parastream) and the demo (internal/demo) print
// through it, so both say the same thing the same way.
package report
