package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/linattn/linattn/theory"
)

// TestLuLimitTrend is the cheap end of the D → ∞ check of docs/math.md
// ("Task diversity: the exact flow against the asymptotic theory"): Lu et
// al.'s layer (-layer labelkey, merged, H = 1) at α = N/D = 10, ρ = 0.01,
// κ = K/D = 1 and 10, tasks N(0, I), converged and averaged over four task
// draws, approaches their limit (theory.LuICL, LuIDG at τ = ∞) from D = 8
// to D = 16. The full table (D = 8…64, eight draws) has the excess fall
// like D^−1 at κ = 10 (e_ICL 0.0108, 0.0055, 0.0027; e_IDG 0.0100, 0.0044,
// 0.0022 at D = 8, 16, 32): here it must fall by a factor between 1.4 and
// 3 for both errors at κ = 10, and shrink for e_ICL at κ = 1.
func TestLuLimitTrend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	excess := func(d int, kappa float64) (icl, idg float64) {
		k := int(kappa * float64(d))
		p := theory.LuParams{Kappa: kappa, Alpha: 10, Tau: math.Inf(1), Rho: 0.01}
		wantICL, _ := theory.LuICL(p)
		wantIDG, _ := theory.LuIDG(p)
		const draws = 4
		for s := 1; s <= draws; s++ {
			out := filepath.Join(dir, fmt.Sprintf("lu-%d-%d-%d.npz", d, k, s))
			code, _, stderr := runCLI(t, "run", "-q", "-model", "merged", "-layer", "labelkey", "-H", "1", "-white", fmt.Sprint(1/float64(d)),
				"-D", fmt.Sprint(d), "-N", fmt.Sprint(10*d), "-noise", "0.01", "-icl", "0", "-task-draw", "gaussian",
				"-tasks", fmt.Sprint(k), "-data-seed", fmt.Sprint(s), "-samples", "101", "-o", out)
			if code != 0 {
				t.Fatalf("D = %d, K = %d: exit %d: %s", d, k, code, stderr)
			}
			res := sidecarOf(t, out)["meta"].(map[string]any)["result"].(map[string]any)
			icl += (res["final_test_icl"].(float64) - wantICL) / draws
			idg += (res["final_test_idg"].(float64) - wantIDG) / draws
		}
		return icl, idg
	}
	icl8, idg8 := excess(8, 10)
	icl16, idg16 := excess(16, 10)
	for _, c := range []struct {
		name     string
		at8, a16 float64
	}{{"e_ICL", icl8, icl16}, {"e_IDG", idg8, idg16}} {
		if r := c.at8 / c.a16; !(c.a16 > 0 && r > 1.4 && r < 3) {
			t.Errorf("κ = 10, %s − limit: %.4g at D = 8, %.4g at D = 16 (ratio %.3g): want positive, falling by 1.4–3", c.name, c.at8, c.a16, r)
		}
	}
	icl8, _ = excess(8, 1)
	icl16, _ = excess(16, 1)
	if !(math.Abs(icl16) < math.Abs(icl8)) {
		t.Errorf("κ = 1, e_ICL − limit: %.4g at D = 8, %.4g at D = 16: want it to shrink", icl8, icl16)
	}
}
