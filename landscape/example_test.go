package landscape_test

import (
	"fmt"

	"github.com/linattn/linattn/landscape"
	"github.com/linattn/linattn/law"
)

// The 2³ fixed points of the separate model for D = 3 (λ = 0.5, 0.3, 0.2,
// N = 20): each subset S of learned eigenvectors, its loss, and whether
// training from small initialization passes through it.
func ExampleEnumerate() {
	nu, _ := law.NuFixed(20)
	data, _ := law.NewData([]float64{0.5, 0.3, 0.2}, law.RandomRotation(3, 1), law.Lengths{Nu: nu})
	landscape.Enumerate(data, func(s landscape.Subset) error {
		learned := make([]int, 0, s.Size)
		for _, d := range landscape.Indices(s.Mask) {
			learned = append(learned, d+1)
		}
		fmt.Printf("S = %-9s L = %.4f on path: %v\n", fmt.Sprint(learned), s.Loss, s.OnPath)
		return nil
	})
	// Output:
	// S = []        L = 1.0000 on path: true
	// S = [1]       L = 0.5652 on path: true
	// S = [2]       L = 0.7534 on path: false
	// S = [1 2]     L = 0.3186 on path: true
	// S = [3]       L = 0.8462 on path: false
	// S = [1 3]     L = 0.4114 on path: false
	// S = [2 3]     L = 0.5996 on path: false
	// S = [1 2 3]   L = 0.1648 on path: true
}
