package cli

import (
	"testing"

	"github.com/linattn/linattn/export"
)

// writeNPY and writeNPZ make input files for the tests.
func writeNPY(t *testing.T, path string, data []float64, shape ...int) {
	t.Helper()
	if err := export.SaveNPY(path, export.Floats("x", data, shape...)); err != nil {
		t.Fatal(err)
	}
}

func writeNPZ(t *testing.T, path string, data map[string][]float64, shapes map[string][]int) {
	t.Helper()
	var arrays []export.Array
	for _, name := range []string{"v", "K", "Q", "U", "v_x", "u_y", "k_y"} {
		if x, ok := data[name]; ok {
			arrays = append(arrays, export.Floats(name, x, shapes[name]...))
		}
	}
	if err := export.SaveNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
}
