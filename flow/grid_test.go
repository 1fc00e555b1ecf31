package flow

import (
	"math"
	"sort"
	"testing"
)

// TestDropsGrid: on a loss path that falls linearly from 1 to 0 between
// t = 40 and t = 60 (flat elsewhere, T = 100), DropsGrid(T, 11) gives 5
// equally spaced times and 6 at the loss levels 1 − k/7, which the linear
// path crosses at t = 40 + 20k/7: sorted, unique, from 0 to T.
func TestDropsGrid(t *testing.T) {
	path := LossPath{T: []float64{0, 40, 60, 100}, Loss: []float64{1, 1, 0, 0}}
	got := DropsGrid(100, 11, path)
	want := []float64{0, 25, 50, 75, 100}
	for k := 1; k <= 6; k++ {
		want = append(want, 40+20*float64(k)/7)
	}
	sort.Float64s(want)
	if len(got) != len(want) {
		t.Fatalf("grid %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("grid[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestObservedPlateaus: a sampled staircase 1 → 0.5 → 0.2 with drops at
// t = 10 and t = 20 reads as the three levels.
func TestObservedPlateaus(t *testing.T) {
	times := []float64{0, 2, 4, 6, 8, 9.5, 10.5, 12, 14, 16, 18, 19.5, 20.5, 22, 24, 26}
	loss := []float64{1, 1, 1, 1, 1, 0.9, 0.6, 0.5, 0.5, 0.5, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2}
	trans := []Transition{{M: 1, T: 10}, {M: 2, T: 20}}
	got := ObservedPlateaus(times, loss, trans, 26)
	want := []float64{1, 0.5, 0.2}
	if len(got) != len(want) {
		t.Fatalf("levels %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("level %d = %v, want %v", i, got[i], want[i])
		}
	}
}
