package output

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/linattn/linattn/export"
)

// Write writes the arrays to path (FILE.npz) and the sidecar beside it
// (SidecarPath), both atomically (export.CreatePending: a temporary file
// synced and renamed), the .npz first, so that a sidecar never describes an
// .npz that is not there. It sets side.Meta's Output, OutputSHA256 and
// Arrays from what it writes. On an error neither file is replaced.
func Write(path string, arrays []export.Array, side *Sidecar) error {
	// The .npz is hashed as it is written; while it is synced the sidecar,
	// which holds the hash, is written and synced too.
	hashed := make(chan []byte, 1)
	type result struct {
		p   *export.PendingFile
		err error
	}
	npzDone := make(chan result, 1)
	go func() {
		sent := false
		p, err := export.CreatePending(path, func(w io.Writer) error {
			h := sha256.New()
			err := export.WriteNPZ(io.MultiWriter(w, h), arrays)
			if err == nil {
				hashed <- h.Sum(nil)
				sent = true
			}
			return err
		})
		if !sent {
			hashed <- nil // failed before the hash: the result says why
		}
		npzDone <- result{p, err}
	}()
	sum := <-hashed
	if sum == nil {
		return (<-npzDone).err
	}
	m := &side.Meta
	m.Output, m.OutputSHA256 = filepath.Base(path), hex.EncodeToString(sum)
	m.Arrays = map[string][]int{}
	for _, a := range arrays {
		m.Arrays[a.Name] = append([]int{}, a.Shape...)
	}
	body, err := side.MarshalJSON()
	var pending *export.PendingFile
	if err == nil {
		pending, err = export.CreatePending(SidecarPath(path), func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		})
	}
	npz := <-npzDone
	switch {
	case npz.err != nil:
		if pending != nil {
			pending.Abort()
		}
		return npz.err
	case err != nil:
		npz.p.Abort()
		return err
	}
	if err := npz.p.Commit(); err != nil {
		pending.Abort()
		return err
	}
	// A failed rename here (rare: both files are already synced in the same
	// directory) leaves the new .npz beside the previous sidecar, whose
	// output_sha256 then no longer matches: Verify detects it.
	return pending.Commit()
}

// PrepareDir creates the directory that is to hold the file path, with its
// parents (as mkdir -p; an existing one is kept), and checks that a file
// can be created in it, so that a command refuses an output it could not
// write before any work. Its errors name the directory. It returns the
// directories it created, outermost first, which RemoveEmptyDirs removes
// again when the command fails before it writes in them: no failed command
// leaves an empty folder behind.
func PrepareDir(path string) ([]string, error) {
	dir := filepath.Dir(path)
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		created = append([]string{d}, created...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		RemoveEmptyDirs(created)
		return nil, fmt.Errorf("cannot create directory %s: %w", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".linattn-probe*")
	if err != nil {
		RemoveEmptyDirs(created)
		return nil, fmt.Errorf("directory %s is not writable", dir)
	}
	probe.Close()
	return created, os.Remove(probe.Name())
}

// RemoveEmptyDirs removes, innermost first, those of the directories dirs
// (outermost first, as PrepareDir returns them) that are empty; a
// directory that holds anything stays.
func RemoveEmptyDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, and keeps it, unless it is empty
	}
}

// unwrapPath drops the operation and path of a *os.PathError, which the
// message names already.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
