package reproduce_test

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/law"
	"github.com/linattn/linattn/layout"
)

// linattn run's default job through the library: out/run.npz, byte for byte.
func Example() {
	data, _ := law.NewData([]float64{0.4, 0.3, 0.2, 0.1}, law.RandomRotation(4, 1), law.Lengths{N: 31})
	s, _ := flow.NewSystem(data, flow.Model{Kind: flow.Separate, H: 4, R: 1, Tau: 1})
	y0, _ := s.Init(0.01, 3)
	tr, _ := s.Run(context.Background(), y0, flow.RunSettings{}) // until converged, 2001 samples
	h := sha256.New()
	export.WriteNPZ(h, layout.Run(s, tr)) // t, loss, v, K, Q, key_alignment, M, …
	fmt.Printf("%v, %d samples, SHA-256 %x\n", tr.Status, len(tr.Times), h.Sum(nil))
	// Output: converged, 2001 samples, SHA-256 5d8e597ed27a1e3897ac9960242adc90e746193f6968b200854178c3ba565205
}
