package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Series is one curve of a CDF plot.
type Series struct {
	Name    string
	Samples []time.Duration
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// CDF writes an SVG plot of the empirical CDFs of series, with a
// logarithmic time axis (milliseconds) when the samples span more than a
// factor of 20, linear otherwise.
func CDF(w io.Writer, title string, series []Series) error {
	const (
		W, H                 = 720.0, 420.0
		left, right, top, bt = 70.0, 20.0, 40.0, 60.0
	)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, d := range s.Samples {
			ms := float64(d) / float64(time.Millisecond)
			lo, hi = math.Min(lo, ms), math.Max(hi, ms)
		}
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("CDF %q: no samples", title)
	}
	logScale := hi/math.Max(lo, 1e-3) > 20
	var x func(float64) float64
	var ticks []float64
	if logScale {
		lo, hi = niceDown(math.Max(lo, 1e-3)), niceUp(hi)
		ticks = append(ticks, lo)
		for t := math.Pow(10, math.Ceil(math.Log10(lo))); t < hi*0.999; t *= 10 {
			if t > lo*1.001 {
				ticks = append(ticks, t)
			}
		}
		ticks = append(ticks, hi)
		x = func(v float64) float64 {
			v = math.Max(v, lo)
			return left + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(W-left-right)
		}
	} else {
		lo = 0
		step := niceStep(hi / 6)
		hi = math.Ceil(hi/step) * step
		for t := 0.0; t <= hi*1.0001; t += step {
			ticks = append(ticks, t)
		}
		x = func(v float64) float64 { return left + v/hi*(W-left-right) }
	}
	y := func(p float64) float64 { return H - bt - p*(H-top-bt) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15" text-anchor="middle">%s</text>`+"\n", W/2, esc(title))
	// Axes and grid.
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/>`+"\n", x(t), y(0), x(t), y(1))
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x(t), y(0)+16, fmtTick(t))
	}
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1} {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(p), W-right, y(p))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%g</text>`+"\n", left-6, y(p)+4, p)
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="black"/>`+"\n", left, top, W-left-right, H-top-bt)
	axis := "latency (ms)"
	if logScale {
		axis += ", log scale"
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", (left+W-right)/2, H-bt+38, axis)
	fmt.Fprintf(&b, `<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">fraction ≤ x</text>`+"\n", (top+H-bt)/2, (top+H-bt)/2)
	// Curves: a step function per series.
	for i, s := range series {
		if len(s.Samples) == 0 {
			continue
		}
		col := palette[i%len(palette)]
		v := make([]float64, len(s.Samples))
		for j, d := range s.Samples {
			v[j] = float64(d) / float64(time.Millisecond)
		}
		slices.Sort(v)
		var pts []string
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(v[0]), y(0)))
		for j, ms := range v {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ms), y(float64(j)/float64(len(v)))))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ms), y(float64(j+1)/float64(len(v)))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(pts, " "))
	}
	// Legend at the lower right, where a CDF's curves seldom are, on white.
	lx := W - right - 260
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="252" height="%d" fill="white" fill-opacity="0.9" stroke="#999"/>`+"\n",
		lx-6, H-bt-26-float64(len(series)-1)*18, len(series)*18+6)
	for i, s := range series {
		ly := H - bt - 14 - float64(len(series)-1-i)*18
		col := palette[i%len(palette)]
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="3"/>`+"\n", lx, ly, lx+24, ly, col)
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s (n=%d)</text>`+"\n", lx+30, ly+4, esc(s.Name), len(s.Samples))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceUp and niceDown round to 1, 2 or 5 times a power of ten.
func niceUp(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*0.999 {
			return m * p
		}
	}
	return 10 * p
}

func niceDown(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v*1.001 {
			return m * p
		}
	}
	return p
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	if v >= 1 || v == 0 {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
