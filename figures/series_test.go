package figures

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestOnAxis: a log axis leaves out the points at t ≤ 0 and counts them;
// a linear axis keeps every point.
func TestOnAxis(t *testing.T) {
	t.Parallel()
	x, y := []float64{0, 1, 2, -1, 3}, []float64{5, 6, 7, 8, 9}
	cx, cy, n := onAxis(x, y, true)
	if n != 2 || len(cx) != 3 || cx[0] != 1 || cy[2] != 9 {
		t.Errorf("log: %v %v dropped %d, want [1 2 3] [6 7 9] dropped 2", cx, cy, n)
	}
	if cx, _, n := onAxis(x, y, false); n != 0 || len(cx) != 5 {
		t.Errorf("lin: %d points, dropped %d", len(cx), n)
	}
	if droppedNote(0) != "" || !strings.Contains(droppedNote(2), "2 sample(s) at t ≤ 0") {
		t.Errorf("notes %q, %q", droppedNote(0), droppedNote(2))
	}
}

// TestInterpolate: linear between samples, the end values outside.
func TestInterpolate(t *testing.T) {
	t.Parallel()
	xs, ys := []float64{0, 1, 3}, []float64{1, 3, -1}
	for _, tc := range []struct{ x, want float64 }{{-1, 1}, {0, 1}, {0.5, 2}, {2, 1}, {3, -1}, {9, -1}} {
		if got := interpolate(xs, ys, tc.x); got != tc.want {
			t.Errorf("interpolate(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// TestSimplify: the simplified line keeps its ends and stays within the
// tolerance of every point it drops (Douglas–Peucker's guarantee); a
// straight run of points becomes one segment.
func TestSimplify(t *testing.T) {
	t.Parallel()
	var pts []vg.Point
	for i := 0; i <= 2000; i++ {
		x := float64(i) / 10
		pts = append(pts, vg.Point{X: vg.Length(x), Y: vg.Length(50 * math.Tanh((x-100)/3))})
	}
	const tol = 0.05
	out := simplify(pts, tol)
	if out[0] != pts[0] || out[len(out)-1] != pts[len(pts)-1] || len(out) > len(pts)/4 {
		t.Fatalf("%d of %d points kept, ends %v %v", len(out), len(pts), out[0], out[len(out)-1])
	}
	for _, p := range pts {
		best := vg.Length(math.Inf(1))
		for k := 1; k < len(out); k++ {
			best = min(best, distance(p, out[k-1], out[k]))
		}
		if best > tol+1e-9 {
			t.Fatalf("point %v is %v from the simplified line, tolerance %v", p, best, tol)
		}
	}
	line := []vg.Point{{X: 0, Y: 0}, {X: 1, Y: 1}, {X: 2, Y: 2}, {X: 3, Y: 3}}
	if got := simplify(line, tol); len(got) != 2 {
		t.Errorf("a straight line keeps %d points, want 2", len(got))
	}
}

// TestSpread: labels of height 10 wanted at 95, 100, 72, 80, 71 in
// [0, 200]: 71, 72 and 80 overlap in a chain and stack around their mean
// 74.33 (64.33 … 84.33); 95 and 100 stack around 97.5 (92.5, 102.5), which
// overlaps 84.33 + 10, so all five stack around their mean 83.6, from 63.6
// by 10, each within 7.5 (maxShift) of its line. In [60, 90] they do not
// all fit: the lowest stays at 71, the highest at 85 (clamped to the range
// less half a label), and the others, within 10 of those, are left out.
// Levels crowded at the bottom, as a long run's late plateaus (100, 80,
// 60, then 30, 27, 24, 21, 18), would stack up to 20 from their lines: the
// labels kept stay at their lines (18, 100, 80, 60, 30), the others out.
func TestSpread(t *testing.T) {
	t.Parallel()
	nan := vg.Length(math.NaN())
	for _, tc := range []struct {
		want, exp []vg.Length
		lo, hi    vg.Length
	}{
		{[]vg.Length{95, 100, 72, 80, 71}, []vg.Length{93.6, 103.6, 73.6, 83.6, 63.6}, 0, 200},
		{[]vg.Length{95, 100, 72, 80, 71}, []vg.Length{nan, 85, nan, nan, 71}, 60, 90},
		{[]vg.Length{100, 80, 60, 30, 27, 24, 21, 18}, []vg.Length{100, 80, 60, 30, nan, nan, nan, 18}, 0, 200},
	} {
		got := spread(tc.want, 10, tc.lo, tc.hi)
		for i := range tc.exp {
			e, g := float64(tc.exp[i]), float64(got[i])
			if math.IsNaN(e) != math.IsNaN(g) || math.Abs(g-e) > 1e-3 {
				t.Errorf("spread(%v) in [%v, %v] = %v, want %v", tc.want, tc.lo, tc.hi, got, tc.exp)
				break
			}
		}
	}
}

// TestTicks: log ticks label the decades as 10^n; linear ticks are round
// and written without spurious digits.
func TestTicks(t *testing.T) {
	t.Parallel()
	var labels []string
	for _, tk := range (logTicks{}).Ticks(30, 3e4) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "10^2 10^3 10^4" {
		t.Errorf("log ticks %q", labels)
	}
	labels = nil
	for _, tk := range (linearTicks{}).Ticks(0, 28504) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0 5000 10000 15000 20000 25000" {
		t.Errorf("linear ticks %q", labels)
	}
	for _, tc := range []struct {
		v, step float64
		want    string
	}{{0.4, 0.2, "0.4"}, {-1, 0.5, "−1.0"}, {2e5, 1e5, "2·10^5"}, {1e6, 5e5, "10^6"}, {0, 1, "0"}} {
		if got := tickLabel(tc.v, tc.step); got != tc.want {
			t.Errorf("tickLabel(%v, %v) = %q, want %q", tc.v, tc.step, got, tc.want)
		}
	}
}

// TestChooseBy: -by when swept; else the first swept field that is not the
// seed; an unswept -by is refused by returning no field.
func TestChooseBy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		swept []string
		by    string
		want  string
	}{
		{[]string{"R", "seed"}, "", "R"},
		{[]string{"seed", "winit"}, "", "winit"},
		{[]string{"seed"}, "", "seed"},
		{nil, "", ""},
		{[]string{"R", "seed"}, "seed", "seed"},
		{[]string{"R"}, "H", ""},
	} {
		if got := chooseBy(tc.swept, tc.by); got != tc.want {
			t.Errorf("chooseBy(%v, %q) = %q, want %q", tc.swept, tc.by, got, tc.want)
		}
	}
}

// TestThinLegend: a legend of 16 ordered entries keeps 10, the first and
// the last among them; a short one is untouched.
func TestThinLegend(t *testing.T) {
	t.Parallel()
	p := &Panel{}
	for m := 1; m <= 16; m++ {
		p.Points = append(p.Points, Points{Label: "m"})
	}
	p.thinLegend(10)
	if p.legendEntries() != 10 || p.Points[0].Label == "" || p.Points[15].Label == "" {
		t.Errorf("%d entries kept, first %q, last %q", p.legendEntries(), p.Points[0].Label, p.Points[15].Label)
	}
	q := &Panel{Curves: []Curve{{Label: "a"}, {Label: "b"}}}
	if q.thinLegend(10); q.legendEntries() != 2 {
		t.Errorf("a short legend lost entries")
	}
}
