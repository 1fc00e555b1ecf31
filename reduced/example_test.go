package reduced_test

import (
	"fmt"

	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/reduced"
)

// How long the first plateau of the paper's D = 4 example lasts in the 1-D
// theory τ v' = λ²v² − λ a v⁵ when the learning head starts at v₀ = 10⁻³:
// the exact time to reach v*/2 from the closed form, beside the paper's
// estimate τ/(λ²v₀).
func ExampleAnsatz_PlateauLength() {
	nu, _ := law.NuFixed(31)
	data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{Nu: nu})
	a := data.AEigenvalues()
	an, _ := reduced.NewAnsatz(data.Lambda()[0], a[0], 1)
	exact, estimate, _ := an.PlateauLength(1e-3)
	fmt.Printf("v* = %.4f, plateau %.1f τ (estimate %.1f τ)\n", an.VStar(), exact, estimate)
	// Output:
	// v* = 1.3097, plateau 6241.1 τ (estimate 6250.0 τ)
}
