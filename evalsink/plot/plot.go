package plot

import (
	"bytes"
	"cmp"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/parastream/parastream/internal/atomicfile"
)

// Plot geometry, in pixels.
const (
	plotW, plotH                       = 860, 520
	marginL, marginR, marginT, marginB = 70, 220, 50, 60
)

// Colours of the axes, labels and grid.
func black() color.RGBA { return color.RGBA{0, 0, 0, 255} }
func grey() color.RGBA  { return color.RGBA{225, 225, 225, 255} }

// seriesColor returns the colour of the i-th series: a palette of ten,
// repeating.
func seriesColor(i int) color.RGBA {
	palette := [...]color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	return palette[i%len(palette)]
}

// Series is one line or cloud of points of a plot, named in the legend.
type Series struct {
	Name string
	X, Y []float64
}

// chart is a plot being drawn: axes over data ranges, into an RGBA image.
type chart struct {
	img                    *image.RGBA
	x0, x1, y0, y1         float64 // data ranges
	left, right, top, bott int     // plot area
}

// Labels are a plot's title and the labels of its axes.
type Labels struct {
	Title, X, Y string
}

// Range is the data range a plot's axes span.
type Range struct {
	X0, X1, Y0, Y1 float64
}

func newChart(labels Labels, x0, x1, y0, y1 float64) *chart {
	title, xlabel, ylabel := labels.Title, labels.X, labels.Y
	c := &chart{img: image.NewRGBA(image.Rect(0, 0, plotW, plotH)), x0: x0, x1: x1, y0: y0, y1: y1,
		left: marginL, right: plotW - marginR, top: marginT, bott: plotH - marginB}
	if c.x1 <= c.x0 {
		c.x0, c.x1 = c.x0-1, c.x0+1
	}
	if c.y1 <= c.y0 {
		c.y0, c.y1 = c.y0-1, c.y0+1
	}
	for i := range c.img.Pix {
		c.img.Pix[i] = 255
	}
	c.text(plotW/2-textWidth(title, 2)/2, 14, title, 2, black())
	c.text((c.left+c.right)/2-textWidth(xlabel, 1)/2, plotH-20, xlabel, 1, black())
	c.text(8, c.top-16, ylabel, 1, black())
	// Grid, ticks and their labels.
	for _, t := range ticks(c.x0, c.x1) {
		px, _ := c.at(t, c.y0)
		c.vline(px, c.top, c.bott, grey())
		c.vline(px, c.bott, c.bott+4, black())
		l := tickLabel(t)
		c.text(px-textWidth(l, 1)/2, c.bott+8, l, 1, black())
	}
	for _, t := range ticks(c.y0, c.y1) {
		_, py := c.at(c.x0, t)
		c.hline(c.left, c.right, py, grey())
		c.hline(c.left-4, c.left, py, black())
		l := tickLabel(t)
		c.text(c.left-8-textWidth(l, 1), py-glyphH/2, l, 1, black())
	}
	c.hline(c.left, c.right, c.bott, black())
	c.vline(c.left, c.top, c.bott, black())
	return c
}

// at maps data coordinates to pixels.
func (c *chart) at(x, y float64) (int, int) {
	px := float64(c.left) + (x-c.x0)/(c.x1-c.x0)*float64(c.right-c.left)
	py := float64(c.bott) - (y-c.y0)/(c.y1-c.y0)*float64(c.bott-c.top)
	return int(math.Round(px)), int(math.Round(py))
}

func (c *chart) set(x, y int, col color.RGBA) {
	if image.Pt(x, y).In(c.img.Rect) {
		c.img.SetRGBA(x, y, col)
	}
}

func (c *chart) hline(x0, x1, y int, col color.RGBA) {
	for x := x0; x <= x1; x++ {
		c.set(x, y, col)
	}
}

func (c *chart) vline(x, y0, y1 int, col color.RGBA) {
	for y := y0; y <= y1; y++ {
		c.set(x, y, col)
	}
}

// line draws a 2-pixel-wide segment (Bresenham).
func (c *chart) line(x0, y0, x1, y1 int, col color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		c.set(x0, y0, col)
		c.set(x0+1, y0, col)
		c.set(x0, y0+1, col)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * err; e2 >= dy {
			err += dy
			x0 += sx
		} else {
			err += dx
			y0 += sy
		}
	}
}

func (c *chart) dot(x, y, r int, col color.RGBA) {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			c.set(x+dx, y+dy, col)
		}
	}
}

// text draws s with its top left at (x, y), each dot scale pixels wide.
func (c *chart) text(x, y int, s string, scale int, col color.RGBA) {
	for _, r := range s {
		g := glyph(r)
		for row := range glyphH {
			for bit := range glyphW {
				if g[row]&(1<<(glyphW-1-bit)) != 0 {
					for i := range scale {
						for j := range scale {
							c.set(x+bit*scale+i, y+row*scale+j, col)
						}
					}
				}
			}
		}
		x += glyphAdv * scale
	}
}

func textWidth(s string, scale int) int { return utf8.RuneCountInString(s) * glyphAdv * scale }

// legend lists the series' names in their colours, right of the plot.
func (c *chart) legend(ss []Series) {
	for i, s := range ss {
		y := c.top + 4 + 16*i
		col := seriesColor(i)
		c.dot(c.right+18, y+3, 3, col)
		name := s.Name
		if len(name) > 30 {
			name = name[:30]
		}
		c.text(c.right+28, y, name, 1, black())
	}
}

func (c *chart) encode(path string) error {
	var b bytes.Buffer
	if err := png.Encode(&b, c.img); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes())
}

// ticks returns about five round values spanning [lo, hi].
func ticks(lo, hi float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var ts []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		ts = append(ts, t)
	}
	return ts
}

func tickLabel(v float64) string {
	if math.Abs(v) < 1e-12 {
		v = 0
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func abs(v int) int { return max(v, -v) }

func sign(v int) int { return cmp.Compare(v, 0) }

// Lines draws series as lines with dots at their points (a series of one
// point: a large marker with its value beside it) and writes the PNG to
// path atomically. The axes span the points.
func Lines(path string, labels Labels, ss []Series) error {
	x0, x1, y0, y1 := bounds(ss)
	pad := (y1 - y0) * 0.05
	if x0 == x1 {
		// One step: centre it.
		w := max(1, math.Abs(x0)/2)
		x0, x1 = x0-w, x0+w
	}
	if y0 == y1 {
		pad = max(1, math.Abs(y0)/10)
	}
	c := newChart(labels, x0, x1, y0-pad, y1+pad)
	for i, s := range ss {
		col := seriesColor(i)
		if len(s.X) == 1 {
			// One checkpoint: a curve of one point, drawn as a large
			// marker with its value beside it.
			px, py := c.at(s.X[0], s.Y[0])
			c.dot(px, py, 5, col)
			c.text(px+9, py-glyphH/2, tickLabel(math.Round(s.Y[0]*10)/10), 1, col)
			continue
		}
		for j := range s.X {
			px, py := c.at(s.X[j], s.Y[j])
			c.dot(px, py, 2, col)
			if j > 0 {
				qx, qy := c.at(s.X[j-1], s.Y[j-1])
				c.line(qx, qy, px, py, col)
			}
		}
	}
	c.legend(ss)
	return c.encode(path)
}

func bounds(ss []Series) (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range ss {
		for i := range s.X {
			x0, x1 = min(x0, s.X[i]), max(x1, s.X[i])
			y0, y1 = min(y0, s.Y[i]), max(y1, s.Y[i])
		}
	}
	return x0, x1, y0, y1
}

// Scatter draws the points of s as dots over the axes of r and writes the
// PNG to path atomically; the legend names s.
func Scatter(path string, labels Labels, r Range, s Series) error {
	c := newChart(labels, r.X0, r.X1, r.Y0, r.Y1)
	col := seriesColor(0)
	for i := range s.X {
		px, py := c.at(s.X[i], s.Y[i])
		c.dot(px, py, 1, col)
	}
	c.legend([]Series{{Name: s.Name}})
	return c.encode(path)
}
