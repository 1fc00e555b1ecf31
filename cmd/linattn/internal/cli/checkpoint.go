package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/spec"
)

// A checkpoint file holds a header of text lines (format, program
// version, the digest of the run's spec), the run's state
// (flow.Checkpoint.Save) and a trailer line with the SHA-256 of that
// state. It is trusted only when all three match: a run of another
// spec or program, or a file damaged or cut short, is refused in one
// line and the run starts over only with -checkpoint-restart.
const (
	checkpointHeader  = "linattn checkpoint 1\n"
	checkpointTrailer = len("sha256 ") + 64 + 1
)

// checkpointPath is the checkpoint beside the output FILE.npz: FILE.ckpt.
func checkpointPath(out string) string { return strings.TrimSuffix(out, ".npz") + ".ckpt" }

// samplingPath is the file beside the output FILE.npz that holds the
// samples made so far while a run samples its output times
// (flow.SamplingProgress), in the checkpoint's envelope:
// FILE.sampling.ckpt.
func samplingPath(out string) string { return strings.TrimSuffix(out, ".npz") + ".sampling.ckpt" }

// checkpointer saves a run's state every interval (and when the run is
// interrupted) and finds the state a killed run saved.
type checkpointer struct {
	e        *env
	path     string
	sampling string // samplingPath
	every    time.Duration
	digest   string
	last     time.Time
	cost     time.Duration // how long the last save took
	failed   bool
	savedT   float64 // the time of the state in the checkpoint (written, or resumed from), or −1
	// sampled and samples count the output times sampled in the last
	// sampling file written (or read), and all.
	sampled, samples int
}

// newCheckpointer returns the job's checkpointer, nil with -checkpoint 0
// or a method that cannot save its state, and the run to resume from, if
// a checkpoint of the job is beside its output. A checkpoint that is not
// the job's, or is damaged, is an error unless restart, which removes it.
func newCheckpointer(e *env, job *spec.Job) (*checkpointer, *flow.Resume, error) {
	var resume *flow.Resume
	c, err := openCheckpointer(e, job, checkpointPath(e.out), samplingPath(e.out), func(r io.Reader) (err error) {
		resume, err = flow.ReadCheckpoint(r)
		return err
	})
	if resume != nil {
		c.savedT = resume.T
	}
	return c, resume, err
}

// openCheckpointer returns the checkpointer of the file at path (and of
// the samples at sampling, "" for none), nil with -checkpoint 0 or a
// method that cannot save its state (-checkpoint given with one is refused
// by spec), and reads with parse the checkpoint of the job beside the
// output, if there is one. A checkpoint that is not the job's, or is
// damaged, is an error unless restart, which removes it.
func openCheckpointer(e *env, job *spec.Job, path, sampling string, parse func(io.Reader) error) (*checkpointer, error) {
	every, err := spec.CheckpointInterval(job.Spec)
	if err != nil {
		return nil, err
	}
	if every == 0 || !flow.CanCheckpoint(job.Method) { // nil: the flow's choice, which can
		return nil, nil
	}
	c := &checkpointer{e: e, path: path, sampling: sampling, every: every, digest: jobDigest(job), last: time.Now(), savedT: -1}
	// A process killed while it wrote a checkpoint left its temporary
	// file (export.CreatePending's name); the checkpoint before is whole.
	for _, p := range []string{c.path, c.sampling} {
		if p == "" {
			continue
		}
		if stale, err := filepath.Glob(filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")); err == nil {
			for _, f := range stale {
				os.Remove(f)
			}
		}
	}
	err = c.readFile(c.path, parse)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.sampling != "" {
			os.Remove(c.sampling) // samples without the run's state are of no use
		}
		return c, nil
	case err != nil && e.restart:
		c.remove()
		return c, nil
	case err != nil:
		return nil, inputError{fmt.Errorf("%v; run with -checkpoint-restart to start over (or remove it)", err)}
	}
	return c, nil
}

// readSampling reads the samples a run killed while it sampled saved
// beside its checkpoint: nil when there are none. Samples that are not
// the job's, or are damaged, are an error unless restart, which removes
// them (the run then samples from the start).
func (c *checkpointer) readSampling() (*flow.SamplingProgress, error) {
	var p *flow.SamplingProgress
	err := c.readFile(c.sampling, func(r io.Reader) (err error) {
		p, err = flow.ReadSamplingProgress(r)
		return err
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil && c.e.restart:
		os.Remove(c.sampling)
		return nil, nil
	case err != nil:
		return nil, inputError{fmt.Errorf("%v; run with -checkpoint-restart to sample from the start (or remove it)", err)}
	}
	c.sampled, c.samples = p.Done()
	return p, nil
}

// jobDigest is the SHA-256 of the job's spec as given, without
// -checkpoint (the fields left to the flow's defaults stay unset: the
// version fixes those), of the input files' hashes and of the program
// version: what makes a run's output what it is.
func jobDigest(job *spec.Job) string {
	sp := job.Spec.Clone()
	sp.Clear("checkpoint")
	body, _ := sp.MarshalJSON()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", version(), body)
	for _, k := range slices.Sorted(maps.Keys(job.Inputs)) {
		fmt.Fprintf(h, "%s %s\n", k, job.Inputs[k].SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// savingShare is the least ratio of the time between two saves to the
// time the first took: at most a tenth of a run's time goes to saving.
const savingShare = 9

// hook is the run's RunSettings.Checkpoint: it saves the state when the
// interval has passed since the last save or the run is being
// interrupted. A checkpoint that cannot be written is reported once and
// the run goes on without.
func (c *checkpointer) hook(ck *flow.Checkpoint) error { return c.saveState(ck.T, ck.Save) }

// saveState saves the state at time t with save when it is due.
func (c *checkpointer) saveState(t float64, save func(io.Writer) error) error {
	if !c.due(c.path, t) {
		return nil
	}
	if c.save(c.path, save) {
		c.savedT = t
	}
	return nil
}

// samplingHook is the run's RunSettings.SamplingCheckpoint: as hook, for
// the samples made so far, beside the checkpoint of the integration
// (which a run resumed from it takes again to where it ended, the same
// steps). An interrupted run stops sampling after the save. Without a
// saved state of the run the samples alone would be of no use,
// and are not saved.
func (c *checkpointer) samplingHook(p *flow.SamplingProgress) error {
	if c.savedT >= 0 && c.due(c.sampling, -1) && c.save(c.sampling, p.Save) {
		c.sampled, c.samples = p.Done()
	}
	return c.e.ctx.Err()
}

// due reports whether to save now: the interval has passed since the
// last save, and savingShare times the time that save took, so that
// saving never takes more than about a tenth of the run's time (a large
// state at a short interval); or the run is being interrupted (or the
// test hook says so; t is the time reached, −1 while sampling).
func (c *checkpointer) due(path string, t float64) bool {
	due := time.Since(c.last) >= max(c.every, savingShare*c.cost)
	if h := hooks(c.e.ctx); h.checkpointDue != nil {
		due = h.checkpointDue(path, t)
	}
	return !c.failed && (due || c.e.ctx.Err() != nil)
}

// save writes a file of the run's state with body and reports whether it
// could; one that cannot be written is reported once and the run goes on
// without checkpoints.
func (c *checkpointer) save(path string, body func(io.Writer) error) bool {
	start := time.Now()
	if err := c.write(path, body); err != nil {
		c.failed = true
		fmt.Fprintf(c.e.stderr, "linattn %s: cannot save a checkpoint, going on without: %v\n", c.e.cmd.Name, err)
		return false
	}
	c.last = time.Now()
	c.cost = c.last.Sub(start)
	if h := hooks(c.e.ctx); h.checkpointed != nil {
		h.checkpointed(path)
	}
	return true
}

// write saves body at path atomically, in the checkpoint's envelope: to
// a temporary file, synced, then renamed over it
// (export.CreatePending), so that a kill at any moment leaves the last
// one whole.
func (c *checkpointer) write(path string, body func(io.Writer) error) error {
	p, err := export.CreatePending(path, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "%sversion %s\nspec %s\n", checkpointHeader, version(), c.digest); err != nil {
			return err
		}
		h := sha256.New()
		if err := body(io.MultiWriter(w, h)); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "sha256 %x\n", h.Sum(nil))
		return err
	})
	if err != nil {
		return err
	}
	return p.Commit()
}

// readFile checks the envelope of the file at path (header, version,
// spec digest, checksum) and reads its body with parse: an error that
// wraps fs.ErrNotExist when there is none.
func (c *checkpointer) readFile(path string, parse func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	refuse := func(why string) error { return fmt.Errorf("checkpoint %s %s", path, why) }
	info, err := f.Stat()
	if err != nil {
		return refuse(err.Error())
	}
	br := bufio.NewReader(f)
	var lines [3]string
	head := 0
	for i := range lines {
		if lines[i], err = br.ReadString('\n'); err != nil || len(lines[i]) > 200 {
			return refuse("is not a linattn checkpoint (damaged header)")
		}
		head += len(lines[i])
	}
	switch {
	case lines[0] != checkpointHeader:
		return refuse("is not a linattn checkpoint of this format")
	case lines[1] != "version "+version()+"\n":
		return refuse(fmt.Sprintf("was written by linattn %s, this is %s", strings.TrimSpace(strings.TrimPrefix(lines[1], "version ")), version()))
	case lines[2] != "spec "+c.digest+"\n":
		return refuse("belongs to another run (its spec or inputs differ from this command's)")
	}
	body := info.Size() - int64(head) - int64(checkpointTrailer)
	if body <= 0 {
		return refuse("is damaged (cut short)")
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, int64(head), body)); err != nil {
		return refuse(err.Error())
	}
	trailer := make([]byte, checkpointTrailer)
	if _, err := f.ReadAt(trailer, int64(head)+body); err != nil || string(trailer) != fmt.Sprintf("sha256 %x\n", h.Sum(nil)) {
		return refuse("is damaged (its checksum does not match)")
	}
	if err := parse(io.NewSectionReader(f, int64(head), body)); err != nil {
		return refuse(fmt.Sprintf("cannot be read: %v", err))
	}
	return nil
}

// remove deletes the checkpoint of a run that has ended (not
// interrupted).
func (c *checkpointer) remove() {
	if c != nil {
		os.Remove(c.path)
		if c.sampling != "" {
			os.Remove(c.sampling)
		}
	}
}

// describe says, for the interrupted-run message, where the state was saved.
func (c *checkpointer) describe() string {
	switch {
	case c == nil:
		return ""
	case c.sampled > 0:
		return fmt.Sprintf("; its state is saved in %s and %d of its %d samples in %s", c.path, c.sampled, c.samples, c.sampling)
	case c.savedT < 0:
		return ""
	}
	return fmt.Sprintf("; its state at t = %.6g is saved in %s", c.savedT, c.path)
}
