package flow

import (
	"fmt"
	"io"

	"github.com/linattn/linattn/internal/floatio"
)

// newFloatReader checks the magic string at the start of r; what it
// wrote otherwise is not of the kind: an error wrapping ErrCheckpoint
// that says so.
func newFloatReader(r io.Reader, magic, kind string) (*floatio.Reader, error) {
	fr, ok := floatio.NewReader(r, magic)
	if !ok {
		return nil, fmt.Errorf("%w: not %s", ErrCheckpoint, kind)
	}
	return fr, nil
}
