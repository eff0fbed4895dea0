// Package plot draws the PNG charts of the result tables with gonum/plot:
// lines over the training step with their intervals (Lines) and a cloud of
// translucent points (Scatter), each with a title, axis labels and a
// legend, written atomically. It knows nothing of results: callers choose
// the series.
package plot
