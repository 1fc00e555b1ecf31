package ode

// blockSource hands out the Solution's full-size blocks, allocated ahead of
// use on another goroutine that writes one value per page of each, so that
// the page faults of a long solve's dense output (a few seconds per GiB on
// a virtual machine) overlap the integration instead of adding to it. The
// values stored do not depend on it.
type blockSource struct {
	blocks chan []float64
	stop   chan struct{}
}

// blockSourceAhead is how many full-size blocks are kept ready (4 MiB).
const blockSourceAhead = 4

func newBlockSource() *blockSource {
	bs := &blockSource{blocks: make(chan []float64, blockSourceAhead), stop: make(chan struct{})}
	go bs.fill()
	return bs
}

func (bs *blockSource) fill() {
	for {
		b := make([]float64, solutionBlockMax)
		for i := 0; i < len(b); i += 512 { // 4 KiB pages
			b[i] = 0
		}
		select {
		case bs.blocks <- b[:0]:
		case <-bs.stop:
			return
		}
	}
}

// get returns an empty block of capacity solutionBlockMax.
func (bs *blockSource) get() []float64 { return <-bs.blocks }

// close ends the goroutine; blocks already made are left to the collector.
func (bs *blockSource) close() { close(bs.stop) }
