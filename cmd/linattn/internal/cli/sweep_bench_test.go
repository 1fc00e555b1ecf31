package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSweep runs 16-run sweeps of the paper's D = 4 example with -j 1
// and -j 2; the ratio of the two times is the parallel speed-up. "seeds"
// sweeps the initialization seed 1–16, whose runs differ in cost (seed 7
// has a final plateau of 2·10⁶τ and takes most of the time, which bounds
// the speed-up); "tau" sweeps τ = 1–16 from seed 3, runs of equal cost (the
// flow in t/τ is the same).
func BenchmarkSweep(b *testing.B) {
	dir := b.TempDir()
	list := "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]"
	for _, c := range []struct{ name, spec string }{
		{"seeds", `{"seed": ` + list + `, "samples": 201}`},
		{"tau", `{"tau": ` + list + `, "samples": 201}`},
	} {
		specPath := filepath.Join(dir, c.name+".json")
		if err := os.WriteFile(specPath, []byte(c.spec), 0o644); err != nil {
			b.Fatal(err)
		}
		for _, j := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/j=%d", c.name, j), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					out := filepath.Join(dir, fmt.Sprintf("%s-j%d-%d", c.name, j, i))
					if code := Main(context.Background(), nopWriter{}, nopWriter{}, []string{"sweep", "-q", "-spec", specPath, "-o", out, "-j", fmt.Sprint(j)}); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
			})
		}
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
