package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/parastream/parastream/internal/atomicfile"
)

// The image's size in pixels, and the resolution its fonts are set at.
const (
	widthPx, heightPx = 860, 520
	dpi               = 96
	// titleWrap is the longest title line, in characters, before it is
	// broken after a colon or a comma so that it is never clipped.
	titleWrap = 80
)

// seriesColor returns the colour of the i-th series: a palette of ten,
// repeating, at opacity alpha (0-255).
func seriesColor(i int, alpha uint8) color.NRGBA {
	palette := [...]color.NRGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	c := palette[i%len(palette)]
	c.A = alpha
	return c
}

// Series is one line or cloud of points of a plot, named in the legend.
// Lo and Hi, when given (one a point), are each point's interval, drawn
// as error bars.
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
}

// Labels are a plot's title and the labels of its axes.
type Labels struct {
	Title, X, Y string
}

// Range is the data range a plot's axes span.
type Range struct {
	X0, X1, Y0, Y1 float64
}

// newPlot is an empty plot with the title (wrapped so that it fits),
// the axis labels and a grid.
func newPlot(labels Labels) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = wrapTitle(labels.Title)
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = labels.X, labels.Y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

// wrapTitle breaks a title longer than titleWrap characters after its
// first colon (else its last comma before the limit), once.
func wrapTitle(t string) string {
	if len(t) <= titleWrap {
		return t
	}
	if i := strings.Index(t, ": "); i > 0 && i < titleWrap {
		return t[:i+1] + "\n" + t[i+2:]
	}
	if i := strings.LastIndex(t[:titleWrap], ", "); i > 0 {
		return t[:i+1] + "\n" + t[i+2:]
	}
	return t
}

// xys are a series' points.
func xys(s Series) plotter.XYs {
	pts := make(plotter.XYs, len(s.X))
	for i := range s.X {
		pts[i].X, pts[i].Y = s.X[i], s.Y[i]
	}
	return pts
}

// withErrors are a series' points with their intervals as distances below
// and above each point.
type withErrors struct {
	plotter.XYs
	plotter.YErrors
}

func errorsOf(s Series) withErrors {
	e := withErrors{XYs: xys(s), YErrors: make(plotter.YErrors, len(s.X))}
	for i := range s.X {
		e.YErrors[i].Low, e.YErrors[i].High = math.Max(0, s.Y[i]-s.Lo[i]), math.Max(0, s.Hi[i]-s.Y[i])
	}
	return e
}

// Lines draws series as lines with dots at their points and their
// intervals as error bars (a series of one point: a large marker with its
// value beside it), and writes the PNG to path atomically. The axes span
// the points and intervals, and start at step 0 when every series has one
// point.
func Lines(path string, labels Labels, ss []Series) error {
	p := newPlot(labels)
	onePoint := true
	for i, s := range ss {
		col := seriesColor(i, 255)
		pts := xys(s)
		onePoint = onePoint && len(pts) == 1
		var thumbs []gplot.Thumbnailer
		if len(pts) > 1 {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("series %s: %w", s.Name, err)
			}
			l.Color, l.Width = col, vg.Points(1.5)
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("series %s: %w", s.Name, err)
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
		if len(pts) == 1 {
			sc.GlyphStyle.Radius = vg.Points(5)
			lab, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: []string{fmt.Sprintf("  %.1f", s.Y[0])}})
			if err != nil {
				return err
			}
			lab.TextStyle[0].Color = col
			lab.TextStyle[0].YAlign = draw.YCenter
			p.Add(lab)
		}
		p.Add(sc)
		thumbs = append(thumbs, sc)
		if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) && len(s.X) > 0 {
			eb, err := plotter.NewYErrorBars(errorsOf(s))
			if err != nil {
				return fmt.Errorf("series %s: %w", s.Name, err)
			}
			eb.LineStyle.Color = seriesColor(i, 160)
			p.Add(eb)
		}
		p.Legend.Add(s.Name, thumbs...)
	}
	if onePoint && len(ss) > 0 {
		// One checkpoint: the axis runs from step 0 past it, so that the
		// marker reads as "the step reached", not as a point on a range.
		x := ss[0].X[0]
		p.X.Min, p.X.Max = math.Min(0, x), math.Max(1, math.Abs(x)*1.25)
	}
	roomForLegend(p, len(ss))
	return save(p, path)
}

// roomForLegend raises the y axis so that a top-right legend of n rows
// sits above the data rather than over it.
func roomForLegend(p *gplot.Plot, n int) {
	lo, hi := p.Y.Min, p.Y.Max
	if hi <= lo {
		lo, hi = lo-1, hi+1
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*math.Min(1, 0.07*float64(n+1))
}

// Scatter draws the points of s as small translucent dots (where many
// share a gold score they darken rather than hide each other) over the
// axes of r, and writes the PNG to path atomically; the legend names s.
func Scatter(path string, labels Labels, r Range, s Series) error {
	p := newPlot(labels)
	sc, err := plotter.NewScatter(xys(s))
	if err != nil {
		return fmt.Errorf("series %s: %w", s.Name, err)
	}
	sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = seriesColor(0, scatterAlpha(len(s.X))), draw.CircleGlyph{}, vg.Points(2)
	p.Add(sc)
	p.Legend.Add(s.Name, sc)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = r.X0, r.X1, r.Y0, r.Y1
	roomForLegend(p, 1)
	return save(p, path)
}

// scatterAlpha is the opacity of a scatter of n points: nearly opaque for
// a few, translucent (60 of 255) from 300 on, where points pile up.
func scatterAlpha(n int) uint8 {
	return uint8(min(220, max(60, 18000/max(n, 1))))
}

// save draws the plot into a widthPx × heightPx PNG and writes it to path
// atomically.
func save(p *gplot.Plot, path string) error {
	px := func(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }
	c := vgimg.NewWith(vgimg.UseWH(px(widthPx), px(heightPx)), vgimg.UseDPI(dpi))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}
