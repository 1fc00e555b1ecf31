package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/linattn/linattn/export"
	"github.com/linattn/linattn/internal/spec"
)

func newIndex(sw *spec.Sweep, rows []indexRow) *sweepIndex {
	idx := &sweepIndex{SweepSHA256: sw.SHA256, Runs: sw.Len(), Swept: sw.Swept,
		ParamValues: map[string][]json.RawMessage{}, StatusCodes: sweepStatusCodes, Rows: rows}
	if idx.Swept == nil {
		idx.Swept = []string{}
	}
	for _, name := range sw.Swept {
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

// writeIndex writes DIR/BASE.json and DIR/BASE.npz. The .npz has one row
// per run: run, status (see status_codes), final_loss and t_end (−1 when
// the run produced none), n_transitions and transitions (runs, D) padded
// with −1, and param_NAME for each swept field: its value when all values
// are numbers, else the index of the value in param_values of the .json.
func writeIndex(dir, base string, idx *sweepIndex) error {
	for i := range idx.Rows {
		idx.Rows[i].Params = compactAll(idx.Rows[i].Params)
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
	n := len(idx.Rows)
	run, status, ntr := make([]int64, n), make([]int64, n), make([]int64, n)
	final, tEnd := make([]float64, n), make([]float64, n)
	width := 0
	for _, r := range idx.Rows {
		width = max(width, len(r.Transitions))
	}
	trans := make([]float64, n*width)
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
			trans[i*width+k] = -1
			if k < len(r.Transitions) {
				trans[i*width+k] = r.Transitions[k]
			}
		}
	}
	arrays := []export.Array{
		export.Ints("run", run, n),
		export.Ints("status", status, n),
		export.Floats("final_loss", final, n),
		export.Floats("t_end", tEnd, n),
		export.Ints("n_transitions", ntr, n),
		export.Floats("transitions", trans, n, width),
	}
	for _, name := range idx.Swept {
		arrays = append(arrays, paramArray(name, idx.ParamValues[name], idx.Rows))
	}
	if err := export.SaveNPZ(filepath.Join(dir, base+".npz"), arrays); err != nil {
		return err
	}
	return export.WriteFileAtomic(filepath.Join(dir, base+".json"), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

func compactAll(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = compact(v)
	}
	return out
}

// paramArray is the column of a swept field: numbers as float64, or the
// index of each row's value in values.
func paramArray(name string, values []json.RawMessage, rows []indexRow) export.Array {
	col := "param_" + strings.ReplaceAll(name, "-", "_")
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

// mergeShards combines the shard indexes in dirs into out/index.{json,npz}.
// The shards must come from one sweep and cover every run exactly once.
func mergeShards(out string, dirs []string) (*sweepIndex, error) {
	var merged *sweepIndex
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
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var idx sweepIndex
			if err := json.Unmarshal(b, &idx); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			var i, n int
			if _, err := fmt.Sscanf(idx.Shard, "%d/%d", &i, &n); err != nil {
				return nil, fmt.Errorf("%s: shard %q: %w", f, idx.Shard, err)
			}
			if seenShard[idx.Shard] {
				continue // the same shard seen through two directories
			}
			seenShard[idx.Shard] = true
			rows := idx.Rows
			if merged == nil {
				merged, shardN = &idx, n
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
	if len(seenShard) != shardN {
		return nil, fmt.Errorf("found %d of the %d shards", len(seenShard), shardN)
	}
	sort.Slice(merged.Rows, func(a, b int) bool { return merged.Rows[a].Run < merged.Rows[b].Run })
	if len(merged.Rows) != merged.Runs {
		return nil, fmt.Errorf("the shards hold %d runs, the sweep has %d", len(merged.Rows), merged.Runs)
	}
	for i, r := range merged.Rows {
		if r.Run != i {
			return nil, fmt.Errorf("run %d is missing or repeated", i)
		}
	}
	merged.StatusCodes = sweepStatusCodes
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	return merged, writeIndex(out, "index", merged)
}
