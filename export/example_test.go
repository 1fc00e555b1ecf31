package export_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
)

// Arrays with their real shapes go into one .npz, written atomically;
// numpy.load reads it as a dict of arrays (d["loss"].shape == (3,),
// d["M"].shape == (3, 2, 2)).
func ExampleSaveNPZ() {
	dir, _ := os.MkdirTemp("", "export-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.npz")
	arrays := []export.Array{
		export.Floats("t", []float64{0, 1, 2}, 3),
		export.Floats("loss", []float64{1, 0.6, 0.4}, 3),
		export.Floats("M", make([]float64, 12), 3, 2, 2),
		export.Ints("transition_m", []int64{1}, 1),
	}
	if err := export.SaveNPZ(path, arrays); err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range arrays {
		fmt.Printf("%s %v\n", a.Name, a.Shape)
	}
	_, err := os.Stat(path)
	fmt.Println("written:", err == nil)
	// Output:
	// t [3]
	// loss [3]
	// M [3 2 2]
	// transition_m [1]
	// written: true
}
