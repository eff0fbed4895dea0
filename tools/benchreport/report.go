package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Row is one figure of the report beside its peer's.
type Row struct {
	// Suite is the group of benchmarks the row comes from (what BENCH
	// selects).
	Suite string `json:"suite"`
	What  string `json:"what"`
	Input string `json:"input"`
	Unit  string `json:"unit"`
	// LowerIsBetter is set for times and memory, where a ratio below 1
	// favours parastream.
	LowerIsBetter bool     `json:"lower_is_better,omitempty"`
	Parastream    *Summary `json:"parastream,omitempty"`
	// ParastreamNote says why Parastream is missing (failed, skipped).
	ParastreamNote string `json:"parastream_note,omitempty"`
	// Peer names what parastream is compared with.
	Peer       string   `json:"peer"`
	PeerFigure *Summary `json:"peer_figure,omitempty"`
	// PeerNote says where a quoted figure comes from, or why the peer's
	// figure is missing and how to install the peer.
	PeerNote string `json:"peer_note,omitempty"`
	// Ratio is parastream's figure over the peer's.
	Ratio *Summary `json:"ratio,omitempty"`
	// RatioHow says how the ratio was taken.
	RatioHow string `json:"ratio_how,omitempty"`
	// PeakRSSMiB is the peak resident set, MiB, of what measured
	// parastream's figure (the stage alone where the benchmark resets the
	// peak before it), where the suite measures it.
	PeakRSSMiB *Summary `json:"peak_rss_mib,omitempty"`
	// Allocs are parastream's heap allocations per AllocsPer ("row",
	// "comment", "pair", ...), where the suite measures them.
	Allocs    *Summary `json:"allocs,omitempty"`
	AllocsPer string   `json:"allocs_per,omitempty"`
	// Spread is the larger of the two figures' spreads (a figure's
	// largest run over its smallest); Unsteady is set when it exceeds
	// maxSpread: the runs disagree too much for their ratio to be read,
	// and the table says so instead of giving it.
	Spread   float64 `json:"spread,omitempty"`
	Unsteady bool    `json:"unsteady,omitempty"`
}

// maxSpread is the spread above which a row's ratio is not given.
const maxSpread = 2.0

// spread is a figure's largest run over its smallest (0 for no figure or
// one whose runs are not all positive).
func (s *Summary) spread() float64 {
	if s == nil || s.Min <= 0 {
		return 0
	}
	return s.Max / s.Min
}

// withSpread sets the row's Spread and Unsteady from its two figures.
func withSpread(r Row) Row {
	r.Spread = max(r.Parastream.spread(), r.PeerFigure.spread())
	r.Unsteady = r.Spread > maxSpread
	return r
}

// ratioCell is what the table's ratio column says of r.
func ratioCell(r Row) string {
	if r.Ratio == nil {
		return ""
	}
	if r.Unsteady {
		return fmt.Sprintf("none: the runs spread %.1fx (over %.0fx), so no ratio of them is steady; see the figures", r.Spread, maxSpread)
	}
	ratio := figure(r.Ratio, "", "")
	if r.RatioHow != "" {
		ratio += " (" + r.RatioHow + ")"
	}
	return ratio
}

// spreadCell is the table's spread column: each figure's largest run over
// its smallest.
func spreadCell(r Row) string {
	one := func(s *Summary) string {
		if x := s.spread(); x > 0 && s.N > 1 {
			return fmt.Sprintf("%.2fx", x)
		}
		return "–"
	}
	out := one(r.Parastream) + " / " + one(r.PeerFigure)
	if r.Unsteady {
		out += " (over 2x)"
	}
	return out
}

// Report is the whole of one `make bench` run.
type Report struct {
	Date     string            `json:"date"`
	Commit   string            `json:"commit"`
	Machine  Machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Bench    string            `json:"bench"`
	Count    int               `json:"count"`
	Seconds  float64           `json:"seconds"`
	// Partial is set while suites are still to run: a report read then
	// (or left by a run stopped part way) lacks their rows.
	Partial bool   `json:"partial,omitempty"`
	RawGo   string `json:"raw_go_output"`
	Rows    []Row  `json:"rows"`
	// Failures are the suites that failed, each with what went wrong.
	Failures []string `json:"failures,omitempty"`
	// Peers holds what each peer script printed as JSON, by script.
	Peers map[string]json.RawMessage `json:"peers,omitempty"`
	// Notes are lines printed under the table.
	Notes []string `json:"notes,omitempty"`
}

// Machine is what the report ran on.
type Machine struct {
	Cores     int    `json:"cores"`
	CPU       string `json:"cpu"`
	MemoryGiB int    `json:"memory_gib"`
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end"`
}

// withRatio sets r.Ratio to the medians' ratio when both figures are
// there and no per-run ratio was set, and returns r.
func withRatio(r Row) Row {
	if r.Ratio == nil && r.Parastream != nil && r.PeerFigure != nil && r.PeerFigure.Median != 0 {
		r.Ratio = Summarize([]float64{r.Parastream.Median / r.PeerFigure.Median})
		if r.RatioHow == "" {
			r.RatioHow = "median over median"
		}
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(rep)
}

// num formats a figure with three significant digits at least and
// thousands separators.
func num(x float64) string {
	ax := math.Abs(x)
	var s string
	switch {
	case ax >= 100:
		s = fmt.Sprintf("%.0f", x)
	case ax >= 10:
		s = fmt.Sprintf("%.1f", x)
	case ax >= 1:
		s = fmt.Sprintf("%.2f", x)
	case ax >= 0.1:
		s = fmt.Sprintf("%.3f", x)
	default:
		s = fmt.Sprintf("%.3g", x)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// figure is a summary as "median (min-max)", or note when it is missing.
func figure(s *Summary, unit, note string) string {
	if s == nil {
		return note
	}
	u := ""
	if unit != "" {
		u = " " + unit
	}
	if s.N == 1 {
		return num(s.Median) + u
	}
	return fmt.Sprintf("%s%s (%s–%s, n=%d)", num(s.Median), u, num(s.Min), num(s.Max), s.N)
}

// cell escapes the characters a Markdown table cell cannot hold.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// WriteMarkdown writes the report as a Markdown page: the machine and
// versions, then one table row per figure.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# parastream beside its peers (make bench)\n\n")
	fmt.Fprintf(&b, "%s, commit %s; `make bench BENCH='%s'` (%d runs of each figure), %.0f s in all.\n\n",
		rep.Date, rep.Commit, rep.Bench, rep.Count, rep.Seconds)
	if rep.Partial {
		b.WriteString("**Partial**: written after a suite; the run had suites left to run (or was stopped).\n\n")
	}
	m := rep.Machine
	fmt.Fprintf(&b, "Machine: %d cores, %s, %d GiB; load average %s at the start, %s at the end.\n\n",
		m.Cores, m.CPU, m.MemoryGiB, m.LoadStart, m.LoadEnd)
	var vs []string
	for _, k := range versionOrder() {
		if v, ok := rep.Versions[k]; ok {
			vs = append(vs, fmt.Sprintf("%s %s", k, v))
		}
	}
	fmt.Fprintf(&b, "Versions: %s.\n\n", strings.Join(vs, "; "))
	b.WriteString("Each figure is the median of its runs (min–max, n runs); the ratio is parastream's figure over the peer's, " +
		"taken within this run. Ratios above 1 favour parastream except where the unit is a time or a size (marked ↓), where below 1 does.\n\n")
	b.WriteString("The spread is each figure's largest run over its smallest (parastream / peer); a row whose runs spread more than 2x gives no ratio. " +
		"Peak RSS is that of the process that measured parastream's figure (of the stage alone where its benchmark resets the peak before it); " +
		"allocations are Go heap allocations per unit of work, from the benchmark.\n\n")
	b.WriteString("| what | input | parastream | peer | peer's figure | ratio | spread | peak RSS | allocations |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Rows {
		unit := r.Unit
		if r.LowerIsBetter {
			unit += " ↓"
		}
		peerFig := figure(r.PeerFigure, unit, r.PeerNote)
		if r.PeerFigure != nil && r.PeerNote != "" {
			peerFig += "; " + r.PeerNote
		}
		allocs := ""
		if r.Allocs != nil {
			allocs = figure(r.Allocs, "a "+r.AllocsPer, "")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(r.What), cell(r.Input),
			cell(figure(r.Parastream, unit, r.ParastreamNote)), cell(r.Peer), cell(peerFig), cell(ratioCell(r)),
			cell(spreadCell(r)), cell(figure(r.PeakRSSMiB, "MiB", "")), cell(allocs))
	}
	if len(rep.Failures) > 0 {
		b.WriteString("\nFailed:\n\n")
		for _, f := range rep.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range rep.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\nGo benchmark output (benchstat's format): `%s`; compare two runs with `make bench-compare OLD=<an earlier .txt>`.\n", rep.RawGo)
	_, err := io.WriteString(w, b.String())
	return err
}

// versionOrder is the order versions are listed in.
func versionOrder() []string {
	return []string{"go", "commit", "kcat", "librdkafka", "b3sum", "torch", "sklearn", "scipy", "numpy", "python"}
}
