package export

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a file that takes n bytes, then fails as a full file system
// does (ENOSPC).
type fullDisk struct {
	w io.Writer
	n int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.n {
		k, _ := d.w.Write(p[:d.n])
		d.n = 0
		return k, &os.PathError{Op: "write", Path: "tmp", Err: syscall.ENOSPC}
	}
	d.n -= len(p)
	return d.w.Write(p)
}

// TestFullDisk: an .npz written over a complete one onto a file system
// that fills after n bytes (none, inside the first array's header, in its
// data, at the last byte) fails with one line naming the file and the
// cause; the complete file is untouched and no temporary file is left.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.npz")
	if err := SaveNPZ(path, sample()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	big := make([]float64, 50000)
	arrays := []Array{Floats("big", big, 50000)}
	var whole bytes.Buffer
	if err := WriteNPZ(&whole, arrays); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 40, 70000, 200000, whole.Len() - 1} {
		_, err := createPending(path, func(w io.Writer) error { return WriteNPZ(w, arrays) },
			func(f io.Writer) io.Writer { return &fullDisk{f, n} })
		want := "export: write " + path + ": "
		if err == nil || !strings.HasPrefix(err.Error(), want) || err.Error() != want+"no space left on device" || strings.Contains(err.Error(), "\n") {
			t.Errorf("full after %d bytes: %v, want one line %q…no space left on device", n, err, want)
		}
		after, _ := os.ReadFile(path)
		entries, _ := os.ReadDir(dir)
		if !bytes.Equal(after, before) || len(entries) != 1 {
			t.Errorf("full after %d bytes: the complete file changed, or %d files are left", n, len(entries))
		}
	}
}
