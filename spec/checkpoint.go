package spec

import (
	"fmt"

	"github.com/linattn/linattn/internal/choice"
	"github.com/linattn/linattn/ode"
)

// resolveCheckpoint checks -checkpoint where given (run and train): a
// duration, and a method that can save its state (ode.CanCheckpoint), so
// that a run that is to resume after a kill does not find out only then
// that it cannot. Left to its default, a method that cannot runs without.
func (s *resolver) resolveCheckpoint() error {
	if !s.Given("checkpoint") {
		return nil
	}
	every, err := CheckpointInterval(s.Spec)
	if err != nil || every == 0 || !s.Given("method") {
		return err
	}
	if m, ok := ode.MethodByName(s.Method); ok && !ode.CanCheckpoint(m) {
		var can []string
		for _, name := range ode.MethodNames() {
			if m, _ := ode.MethodByName(name); ode.CanCheckpoint(m) {
				can = append(can, name)
			}
		}
		return fmt.Errorf("-checkpoint %s: -method %s cannot save its state (%s can); give -checkpoint 0 to run without checkpoints", s.Checkpoint, s.Method, choice.OrList(can))
	}
	return nil
}
