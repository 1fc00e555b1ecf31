package read_test

import (
	"fmt"

	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// Any output of linattn read back through package output: command, arrays,
// sidecar; its spec through package spec.
func Example() {
	for _, path := range []string{"testdata/run.npz", "testdata/landscape.npz", "testdata/sweep/index.npz"} {
		f, _ := output.Open(path)               // FILE.npz and its sidecar FILE.json
		loss, _, _ := f.Floats(output.Loss, -1) // a sweep's index has none
		if fmt.Printf("%s %v %.4f", f.Command(), f.Names(), loss); f.Sidecar != nil {
			sp, _ := spec.Parse(f.Sidecar.Spec) // the job's fields (package spec)
			fmt.Print(" ", f.Sidecar.Meta.Status, ", H = ", sp.H)
		}
		fmt.Println()
	}
	// Output:
	// run [t loss v K Q key_alignment M Lambda eigvals eigvecs plateaus transitions transition_m] [1.0000 0.7838 0.5701 0.3536 0.1360] converged, H = 4
	// landscape [bitmask subset size loss on_path n_positive n_zero n_negative class unstable_rate escape_rate residual jacobian_eigenvalues Lambda eigvals eigvecs plateaus] [1.0000 0.6406 0.7368 0.3774 0.8324 0.4730 0.5692 0.2098 0.9262 0.5668 0.6630 0.3036 0.7586 0.3992 0.4954 0.1360] complete, H = 4
	// sweep [run status final_loss t_end n_transitions transitions transition_m param_seed] []
}
