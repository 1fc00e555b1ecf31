package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/internal/share"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

const sweepUsage = `usage: linattn sweep -spec FILE.json [-command run|train|reduced|landscape] [-o DIR] [-j N] [-shard I/N] [-q] [-plot]
       linattn sweep -merge [-o DIR] DIR...

Runs every point of a sweep: FILE.json is a spec of the command (run by
default) in which any scalar field may be a list of values ("seed": [1, 2,
3]) and eigs a list of spectra. The runs are the Cartesian product of the
lists, in the order of the fields in 'linattn run -h', the last varying
fastest; run i writes DIR/COMMAND-i.npz and its sidecar, in parallel on -j
cores. The index (one row per run: parameters, status, final loss, drop
times) is written to DIR/index.json and DIR/index.npz.

Rerunning a sweep reuses every run whose sidecar says complete, whose .npz
matches the sidecar's SHA-256 and whose spec is the run's, and redoes the
others. -shard I/N (I from 0) runs runs I, I+N, I+2N, ... only and writes
DIR/index.shard-I-of-N.{json,npz}, so a job array covers the sweep with no
coordination (SLURM: -shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT
with --array=0-(N-1)); 'linattn sweep -merge DIR...' then combines the
shard indexes of DIRs into the index of -o (default the first DIR).

Exit status: 0 every run complete, 1 some run failed (recorded in the
index), 2 bad input, 130 interrupted (completed runs are kept).

flags:
`

func sweepMain(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("linattn sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	specFile := fs.String("spec", "", "FILE.json: the sweep spec (required unless -merge)")
	command := fs.String("command", "run", "the command each run is: run, train, reduced or landscape")
	dir := fs.String("o", "", "output directory, created if needed (default out/sweep; with -merge, the first DIR)")
	jobs := fs.Int("j", runtime.NumCPU(), "runs in parallel, ≥ 1")
	shard := fs.String("shard", "", "I/N: run only the I-th of N disjoint slices, 0 ≤ I < N")
	merge := fs.Bool("merge", false, "combine the shard indexes of the DIR arguments")
	quiet := fs.Bool("q", false, "no progress on stderr")
	plotAs := addPlotFlag(fs, "sweep")
	usageErr := usageError(stderr, "sweep")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, sweepUsage)
			printFlags(stdout, fs)
			return ExitOK
		}
		return usageErr("%v (see linattn sweep -h)", err)
	}
	if *merge {
		return mergeMain(stdout, usageErr, *dir, fs.Args())
	}
	if fs.NArg() > 0 {
		if strings.HasSuffix(fs.Arg(0), ".json") {
			return usageErr("unexpected argument %q: the sweep spec goes after -spec (linattn sweep -spec %s)", fs.Arg(0), fs.Arg(0))
		}
		return usageErr("unexpected arguments %q (directories go with -merge)", fs.Args())
	}
	c := commands[*command]
	if c == nil {
		return usageErr("-command = %q, want run, train, reduced or landscape", *command)
	}
	if c.Name == "landscape" && plotAs.format != "" {
		return usageErr("-plot: a sweep of landscape has no figure; draw one of its outputs with linattn plot DIR/landscape-0.npz")
	}
	if *jobs < 1 {
		return usageErr("-j = %d, want ≥ 1", *jobs)
	}
	shardI, shardN, ok := parseShard(*shard)
	if !ok {
		return usageErr("-shard = %q, want I/N with 0 ≤ I < N", *shard)
	}
	sw, note, err := loadSweep(*specFile, c)
	if err != nil {
		return usageErr("%v", err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "linattn sweep: note: -spec %s is %s\n", *specFile, note)
	}
	ignored, err := checkSweepIgnored(sw)
	if err != nil {
		return usageErr("-spec %s: %v", *specFile, err)
	}
	for _, n := range ignored {
		fmt.Fprintf(stderr, "linattn sweep: note: %s\n", n)
	}
	out := *dir
	if out == "" {
		out = filepath.Join("out", "sweep")
	}
	created, err := output.PrepareDir(filepath.Join(out, "index.npz"))
	if err != nil {
		return usageErr("-o %s: %v", out, err)
	}
	r := &sweepRunner{ctx: ctx, cmd: c, sweep: sw, dir: out, specDir: filepath.Dir(*specFile),
		progress: newProgress(stderr, !*quiet && isTerminal(stderr))}
	rows, base, err := r.runShard(shardI, shardN, *jobs, *shard != "")
	if err != nil {
		output.RemoveEmptyDirs(created) // a failed sweep leaves no empty folder
		fmt.Fprintf(stderr, "linattn sweep: %v\n", err)
		return ExitFailure
	}
	failed := reportSweep(stdout, stderr, sw.Len(), rows, r.reused, filepath.Join(out, base))
	if ctx.Err() == nil {
		if err := plotBeside(stdout, filepath.Join(out, base+".npz"), plotAs); err != nil {
			fmt.Fprintf(stderr, "linattn sweep: %v\n", err)
			return ExitFailure
		}
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "linattn sweep: interrupted; the completed runs are kept in %s; run the same command again to finish (it reuses them)\n", out)
		return ExitInterrupted
	case failed:
		return ExitFailure
	}
	return ExitOK
}

// checkSweepIgnored applies checkIgnored's rule to a sweep, whose fields
// all come from one file: R in a sweep whose every run is merged, and tol
// in one whose every run has a final time T > 0, mean nothing and are
// refused; where only some runs are so, each such field gets a note
// saying in how many runs it is dropped (issue 45: both were dropped
// silently).
func checkSweepIgnored(sw *spec.Sweep) (notes []string, err error) {
	for _, c := range []struct {
		field, by, why, fix string
		meaningless         func(raw json.RawMessage) bool
	}{
		{"R", "model", "the rank of the separate model's keys and queries, which the merged model has not", "leave R out (or give model separate)",
			func(raw json.RawMessage) bool {
				var m flow.Kind
				return json.Unmarshal(raw, &m) == nil && m == flow.Merged
			}},
		{"tol", "T", "the convergence test of a run until converged (T 0), which a run to a final time T > 0 has not", "leave tol out (or give T 0)",
			func(raw json.RawMessage) bool { var t float64; json.Unmarshal(raw, &t); return t > 0 }},
	} {
		if sw.Given(c.field) == nil {
			continue
		}
		by := sw.Given(c.by)
		n := 0
		for _, v := range by {
			if c.meaningless(v) {
				n++
			}
		}
		switch {
		case n == 0 || len(by) == 0:
		case n == len(by):
			return nil, fmt.Errorf("field %q is %s, and every run of the sweep has %s %s: %s", c.field, c.why, c.by, string(by[0]), c.fix)
		default:
			notes = append(notes, fmt.Sprintf("%s is %s: it is dropped in the %d of the %d runs whose %s makes it so", c.field, c.why, sw.Len()/len(by)*n, sw.Len(), c.by))
		}
	}
	return notes, nil
}

// loadSweep reads the sweep spec of command c at path (readSpecFields:
// a sidecar is a spec of one run), and a note on the fields dropped from
// another command's sidecar.
func loadSweep(path string, c *command) (*spec.Sweep, string, error) {
	if path == "" {
		return nil, "", errors.New("-spec FILE.json is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("-spec: %w", err)
	}
	b, src, err := readSpecFields(b, c)
	if err != nil {
		return nil, "", fmt.Errorf("-spec %s: %w", path, err)
	}
	sw, err := spec.ParseSweep(b)
	if err != nil {
		return nil, "", fmt.Errorf("-spec %s: %w", path, err)
	}
	return sw, src.note(c, false), nil
}

// runShard runs the runs i ≡ shardI (mod shardN) of the sweep, j at a time,
// and writes their index (index, or index.shard-I-of-N when sharded), whose
// base name it returns with the rows.
func (r *sweepRunner) runShard(shardI, shardN, j int, sharded bool) ([]output.IndexRow, string, error) {
	var runs []int
	for i := shardI; i < r.sweep.Len(); i += shardN {
		runs = append(runs, i)
	}
	rows := r.runAll(runs, j)
	r.progress.Done()
	idx := output.NewIndex(r.sweep, rows)
	base := "index"
	if sharded {
		idx.Shard = fmt.Sprintf("%d/%d", shardI, shardN)
		base = fmt.Sprintf("index.shard-%d-of-%d", shardI, shardN)
	}
	return rows, base, output.WriteIndex(r.dir, base, idx)
}

// mergeMain is sweep -merge: it combines the shard indexes of dirs into out
// (default the first of them).
func mergeMain(stdout io.Writer, usageErr func(string, ...any) int, out string, dirs []string) int {
	if len(dirs) == 0 {
		return usageErr("-merge needs the directories of the shards")
	}
	if out == "" {
		out = dirs[0]
	}
	idx, err := output.MergeIndexes(out, dirs)
	if err != nil {
		return usageErr("-merge: %v", err)
	}
	fmt.Fprintf(stdout, "merged %d runs into %s and %s\n", idx.Runs, filepath.Join(out, "index.json"), filepath.Join(out, "index.npz"))
	return ExitOK
}

// parseShard parses -shard I/N ("" is the whole sweep, 0/1).
func parseShard(shard string) (i, n int, ok bool) {
	if shard == "" {
		return 0, 1, true
	}
	a, b, ok := strings.Cut(shard, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, false
	}
	return i, n, true
}

// reportSweep prints the counts of the runs by status and the failures,
// and reports whether any run failed.
func reportSweep(stdout, stderr io.Writer, total int, rows []output.IndexRow, reused int, index string) (failed bool) {
	counts := map[string]int{}
	for _, row := range rows {
		counts[row.Status]++
	}
	fmt.Fprintf(stdout, "sweep: %d of %d runs: %d complete (%d reused), %d failed, %d incomplete, %d not run; index %s.{json,npz}\n",
		len(rows), total, counts["complete"], reused, counts["failed"], counts["incomplete"], counts["not run"], index)
	for _, row := range rows {
		if row.Status == "failed" {
			fmt.Fprintf(stderr, "run %d failed: %s\n", row.Run, row.Error)
		}
	}
	return counts["failed"] > 0
}

// sweepRunner executes the runs of a sweep.
type sweepRunner struct {
	ctx     context.Context
	cmd     *command // what each run is
	sweep   *spec.Sweep
	dir     string
	specDir string // relative input files are relative to the spec's directory

	// workers is the processors each run takes: a share of them beside
	// the others (runAll).
	workers int

	mu       sync.Mutex
	progress *progress
	done     int
	reused   int // runs whose output was complete and kept
}

// runAll runs the given runs on j workers, each run on its share of the
// processors when several run side by side (share.Split), and returns
// their rows in order.
func (r *sweepRunner) runAll(runs []int, j int) []output.IndexRow {
	if side := min(j, len(runs)); side > 1 {
		r.workers = share.Split(0, side)
	}
	rows := make([]output.IndexRow, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < j; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				rows[k] = r.run(runs[k])
				r.mu.Lock()
				r.done++
				if hook := hooks(r.ctx).runDone; hook != nil {
					hook(r.done)
				}
				if r.progress.on {
					el := time.Since(start).Seconds()
					rate := float64(r.done) / el
					r.progress.Show(fmt.Sprintf("sweep: %d/%d runs done, %.3g runs/s, ~%.0f s left",
						r.done, len(runs), rate, float64(len(runs)-r.done)/rate))
				}
				r.mu.Unlock()
			}
		}()
	}
	for k := range runs {
		if r.ctx.Err() != nil {
			break
		}
		select {
		case next <- k:
		case <-r.ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	for k := range rows {
		if rows[k].Status == "" { // never started
			rows[k] = r.row(runs[k], "not run")
		}
	}
	return rows
}

func (r *sweepRunner) row(i int, status string) output.IndexRow {
	return output.IndexRow{Run: i, File: r.fileName(i), Params: r.sweep.Values(i), Status: status,
		Transitions: []float64{}, TransitionM: []int{}}
}

func (r *sweepRunner) fileName(i int) string {
	width := len(strconv.Itoa(r.sweep.Len() - 1))
	return fmt.Sprintf("%s-%0*d.npz", r.cmd.Name, width, i)
}

// run executes run i, or reuses its output when that is complete and valid.
func (r *sweepRunner) run(i int) output.IndexRow {
	row := r.row(i, "failed")
	sp, err := r.sweep.Run(i)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	sp.Rebase(r.specDir)
	job, err := spec.Resolve(sp, r.cmd.Groups...)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	path := filepath.Join(r.dir, row.File)
	if reusable(path, r.cmd.Name, job.Filled()) {
		r.mu.Lock()
		r.reused++
		r.mu.Unlock()
	} else {
		// Remove what an earlier attempt left, so that the row describes
		// this run only.
		os.Remove(path)
		os.Remove(output.SidecarPath(path))
		e := &env{ctx: r.ctx, cmd: r.cmd, stdout: io.Discard, stderr: io.Discard, out: path,
			progress: newProgress(io.Discard, false), workers: r.workers}
		if err := r.cmd.Run(e, job); err != nil {
			row.Error = err.Error()
		}
	}
	side, err := row.Summarize(path)
	if err != nil {
		if row.Error == "" {
			row.Error = err.Error()
		}
		return row
	}
	switch {
	case side.Meta.Complete:
		row.Status = "complete"
	case r.ctx.Err() != nil:
		row.Status = "incomplete"
	}
	return row
}

// reusable reports whether the run at path is complete and valid: its
// sidecar says complete and was written by command, the .npz has the
// recorded SHA-256, and the sidecar's spec is want.
func reusable(path, command string, want *spec.Spec) bool {
	side, _, err := output.Verify(path)
	if err != nil || !side.Meta.Complete || side.Meta.Command != command {
		return false
	}
	got, err := spec.Parse(side.Spec)
	if err != nil {
		return false
	}
	gb, err1 := got.MarshalJSON()
	wb, err2 := want.MarshalJSON()
	return err1 == nil && err2 == nil && string(gb) == string(wb)
}
