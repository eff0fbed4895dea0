// Package plot draws the PNG charts of the result tables: lines over the
// training step (Lines) and a cloud of points (Scatter), with axes, a grid,
// tick labels, a legend and its own 5×7 bitmap font, written atomically.
// It knows nothing of results: callers choose the series.
package plot
