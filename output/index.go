package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/linattn/linattn/export"
)

// StatusCodes are the statuses of a sweep's runs and their codes in the
// index's IndexStatus array.
func StatusCodes() map[string]int {
	return map[string]int{"complete": 0, "failed": 1, "incomplete": 2, "not run": 3}
}

// Index is a sweep's index.json: one row per run.
type Index struct {
	SweepSHA256 string                       `json:"sweep_sha256"` // Sweep.SHA256
	Runs        int                          `json:"runs"`
	Shard       string                       `json:"shard,omitempty"` // I/N of a shard's index
	Swept       []string                     `json:"swept"`
	ParamValues map[string][]json.RawMessage `json:"param_values"` // each swept field's values, in order
	StatusCodes map[string]int               `json:"status_codes"`
	Rows        []IndexRow                   `json:"rows"`
}

// IndexRow is one run of a sweep.
type IndexRow struct {
	Run         int                        `json:"run"`
	File        string                     `json:"file"` // relative to the index
	Params      map[string]json.RawMessage `json:"params"`
	Status      string                     `json:"status"` // a key of StatusCodes
	Error       string                     `json:"error,omitempty"`
	FinalLoss   *float64                   `json:"final_loss,omitempty"`
	TEnd        *float64                   `json:"t_end,omitempty"`
	Transitions []float64                  `json:"transitions"`
	TransitionM []int                      `json:"transition_m"`
}

// Summarize fills the row's final loss, end time and observed drops from
// the output at path, as far as the command that wrote it has them (run
// and train: all three; reduced: the drops; landscape: none), and returns
// its sidecar.
func (row *IndexRow) Summarize(path string) (*Sidecar, error) {
	side, _, err := ReadSidecar(path)
	if err != nil {
		return nil, err
	}
	var res struct {
		FinalLoss   *float64         `json:"final_loss"`
		TEnd        *float64         `json:"t_end"`
		Transitions []TransitionMeta `json:"transitions"`
	}
	if len(side.Meta.Result) > 0 && side.Meta.Command != "landscape" {
		if err := json.Unmarshal(side.Meta.Result, &res); err != nil {
			return nil, fmt.Errorf("sidecar of %s: result: %w", path, err)
		}
	}
	row.FinalLoss, row.TEnd = res.FinalLoss, res.TEnd
	if row.TEnd == nil && side.Meta.Solver != nil {
		row.TEnd = &side.Meta.Solver.TEnd
	}
	for _, tn := range res.Transitions {
		row.Transitions, row.TransitionM = append(row.Transitions, tn.T), append(row.TransitionM, tn.M)
	}
	if side.Meta.Command == "reduced" {
		return side, row.reducedDrops(path)
	}
	return side, nil
}

// reducedDrops sets the row's drops from the output of linattn reduced:
// per drop (separate model, R = 1), or the merged model's one drop (m = D).
func (row *IndexRow) reducedDrops(path string) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	if f.Has(TDropObserved) {
		t, _, err := f.Floats(TDropObserved)
		eig, _, err2 := f.Floats(Eigvals, -1)
		if err = errors.Join(err, err2); err != nil || len(t) != 1 {
			return err
		}
		row.Transitions, row.TransitionM = append(row.Transitions, t[0]), append(row.TransitionM, len(eig))
		return nil
	}
	if !f.Has(Drop) {
		return nil
	}
	m, _, err := f.Ints(Drop, -1)
	if err != nil {
		return err
	}
	t, _, err := f.Floats(TObserved, len(m))
	for i := range t {
		row.Transitions, row.TransitionM = append(row.Transitions, t[i]), append(row.TransitionM, int(m[i]))
	}
	return err
}

// Sweep is what an index records of a sweep (spec.Sweep is one).
type Sweep interface {
	Hash() string          // the SHA-256 of the sweep's canonical JSON
	SweptFields() []string // the fields given as lists
	Len() int              // the number of runs
	// Values returns the JSON values of the swept fields for run i.
	Values(i int) map[string]json.RawMessage
}

// NewIndex returns the index of sweep sw with the rows.
func NewIndex(sw Sweep, rows []IndexRow) *Index {
	idx := &Index{SweepSHA256: sw.Hash(), Runs: sw.Len(), Swept: sw.SweptFields(),
		ParamValues: map[string][]json.RawMessage{}, StatusCodes: StatusCodes(), Rows: rows}
	if idx.Swept == nil {
		idx.Swept = []string{}
	}
	for _, name := range idx.Swept {
		seen := map[string]bool{}
		for i := 0; i < sw.Len(); i++ {
			v := compact(sw.Values(i)[name])
			if !seen[string(v)] {
				seen[string(v)] = true
				idx.ParamValues[name] = append(idx.ParamValues[name], v)
			}
		}
	}
	return idx
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// WriteIndex writes DIR/BASE.json and DIR/BASE.npz, atomically. The .npz
// has one row per run: IndexRun, IndexStatus, IndexFinalLoss, IndexTEnd,
// IndexNTransitions, Transitions (runs, k) and TransitionM (runs, k), the
// k-th drop observed in column k − 1 (by order: the merged model's one
// drop, m = D, in the first column) with its m, padded with −1, and a
// column IndexParamPrefix + NAME for each swept field (dashes as
// underscores).
func WriteIndex(dir, base string, idx *Index) error {
	for i := range idx.Rows {
		params := make(map[string]json.RawMessage, len(idx.Rows[i].Params))
		for k, v := range idx.Rows[i].Params {
			params[k] = compact(v)
		}
		idx.Rows[i].Params = params
	}
	b, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	b, err = indentObjects(b, 1)
	if err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	// One row per line.
	b = bytes.ReplaceAll(b, []byte("},{\"run\""), []byte("},\n    {\"run\""))
	b = bytes.Replace(b, []byte("\"rows\": [{"), []byte("\"rows\": [\n    {"), 1)
	b = bytes.Replace(b, []byte("}]\n}"), []byte("}\n  ]\n}"), 1)
	b = append(b, '\n')
	if err := export.SaveNPZ(filepath.Join(dir, base+".npz"), indexArrays(idx)); err != nil {
		return err
	}
	return export.WriteFileAtomic(filepath.Join(dir, base+".json"), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// indexArrays are the columns of index.npz.
func indexArrays(idx *Index) []export.Array {
	n := len(idx.Rows)
	run, status, ntr := make([]int64, n), make([]int64, n), make([]int64, n)
	final, tEnd := make([]float64, n), make([]float64, n)
	width := 0
	for _, r := range idx.Rows {
		width = max(width, len(r.Transitions))
	}
	trans, ms := make([]float64, n*width), make([]int64, n*width)
	for i, r := range idx.Rows {
		run[i], status[i], ntr[i] = int64(r.Run), int64(idx.StatusCodes[r.Status]), int64(len(r.Transitions))
		final[i], tEnd[i] = -1, -1
		if r.FinalLoss != nil {
			final[i] = *r.FinalLoss
		}
		if r.TEnd != nil {
			tEnd[i] = *r.TEnd
		}
		for k := 0; k < width; k++ {
			trans[i*width+k], ms[i*width+k] = -1, -1
			if k < len(r.Transitions) {
				trans[i*width+k] = r.Transitions[k]
			}
			if k < len(r.TransitionM) {
				ms[i*width+k] = int64(r.TransitionM[k])
			}
		}
	}
	arrays := []export.Array{
		export.Ints(IndexRun, run, n),
		export.Ints(IndexStatus, status, n),
		export.Floats(IndexFinalLoss, final, n),
		export.Floats(IndexTEnd, tEnd, n),
		export.Ints(IndexNTransitions, ntr, n),
		export.Floats(Transitions, trans, n, width),
		export.Ints(TransitionM, ms, n, width),
	}
	for _, name := range idx.Swept {
		arrays = append(arrays, paramArray(name, idx.ParamValues[name], idx.Rows))
	}
	return arrays
}

// paramArray is the column of a swept field: numbers as float64, or the
// index of each row's value in values.
func paramArray(name string, values []json.RawMessage, rows []IndexRow) export.Array {
	col := IndexParamPrefix + strings.ReplaceAll(name, "-", "_")
	nums := make([]float64, len(rows))
	numeric := true
	for i, r := range rows {
		var x float64
		if json.Unmarshal(r.Params[name], &x) != nil || math.IsInf(x, 0) {
			numeric = false
			break
		}
		nums[i] = x
	}
	if numeric {
		return export.Floats(col, nums, len(rows))
	}
	codes := make([]int64, len(rows))
	for i, r := range rows {
		for k, v := range values {
			if bytes.Equal(compact(r.Params[name]), v) {
				codes[i] = int64(k)
			}
		}
	}
	return export.Ints(col, codes, len(rows))
}

// MergeIndexes combines the shard indexes (DIR/index.shard-I-of-N.json) in
// dirs into out/index.{json,npz}, with the rows' files relative to out. The
// shards must come from one sweep and cover every run exactly once.
func MergeIndexes(out string, dirs []string) (*Index, error) {
	var merged *Index
	seenShard := map[string]bool{}
	shardN := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "index.shard-*-of-*.json"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s holds no shard index (index.shard-I-of-N.json)", dir)
		}
		sort.Strings(files)
		for _, f := range files {
			idx, n, err := readShard(f)
			if err != nil {
				return nil, err
			}
			if seenShard[idx.Shard] {
				continue // the same shard seen through two directories
			}
			seenShard[idx.Shard] = true
			rows := idx.Rows
			if merged == nil {
				merged, shardN = idx, n
				merged.Shard, merged.Rows = "", nil
			} else if idx.SweepSHA256 != merged.SweepSHA256 || n != shardN {
				return nil, fmt.Errorf("%s is from another sweep or sharding (%s, %s) than the first (%s, %d shards)", f, idx.SweepSHA256[:12], idx.Shard, merged.SweepSHA256[:12], shardN)
			}
			for _, r := range rows {
				rel, err := filepath.Rel(out, filepath.Join(dir, r.File))
				if err != nil {
					return nil, err
				}
				r.File = filepath.ToSlash(rel)
				merged.Rows = append(merged.Rows, r)
			}
		}
	}
	if err := merged.checkComplete(len(seenShard), shardN); err != nil {
		return nil, err
	}
	merged.StatusCodes = StatusCodes()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	return merged, WriteIndex(out, "index", merged)
}

// readShard reads a shard's index and its number of shards.
func readShard(path string) (*Index, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	var i, n int
	if _, err := fmt.Sscanf(idx.Shard, "%d/%d", &i, &n); err != nil {
		return nil, 0, fmt.Errorf("%s: shard %q: %w", path, idx.Shard, err)
	}
	return &idx, n, nil
}

// checkComplete sorts the merged rows and checks that the shards (found of
// n) hold every run once.
func (idx *Index) checkComplete(found, n int) error {
	if found != n {
		return fmt.Errorf("found %d of the %d shards", found, n)
	}
	sort.Slice(idx.Rows, func(a, b int) bool { return idx.Rows[a].Run < idx.Rows[b].Run })
	if len(idx.Rows) != idx.Runs {
		return fmt.Errorf("the shards hold %d runs, the sweep has %d", len(idx.Rows), idx.Runs)
	}
	for i, r := range idx.Rows {
		if r.Run != i {
			return fmt.Errorf("run %d is missing or repeated", i)
		}
	}
	return nil
}
